"""Drives an Iceberg REST catalog with pyiceberg the way a pyiceberg user writes to one (ADR 0039).

    python pyiceberg_driver.py URI scenario NAMESPACE   create, two appends, rename a column, drop and re-add a
                                                        column, rename the table; checks each step through
                                                        pyiceberg and prints what it did as JSON
    python pyiceberg_driver.py URI tables NAMESPACE N   create NAMESPACE and N empty tables t0000..t<N-1>
    python pyiceberg_driver.py URI namespaces PARENT N  create PARENT and N child namespaces n0000..n<N-1>
    python pyiceberg_driver.py URI append NAMESPACE T   append one row of nulls to NAMESPACE.T; prints the snapshot
    python pyiceberg_driver.py URI step STEP NAMESPACE  one step of the scenario (create, append-1, append-2,
                                                        rename-column, drop-readd-column, append-evolved,
                                                        set-tags, unset-tags, rename-table, drop-table), so a
                                                        sync can run after each; prints the table's state
                                                        after it

NAMESPACE is dotted ("t-3fa2c1.sales" is the namespace sales inside t-3fa2c1); every level is created. The
scenario's table is NAMESPACE.orders, renamed to NAMESPACE.orders_v2 at the end. Exit status 1 with a message
on stderr when a step does not do what pyiceberg promises.
"""

import json
import sys

import pyarrow as pa
from pyiceberg.catalog import load_catalog
from pyiceberg.schema import Schema
from pyiceberg.types import DoubleType, LongType, NestedField, StringType, StructType


def fail(msg):
    print("pyiceberg_driver: " + msg, file=sys.stderr)
    sys.exit(1)


def ensure_namespace(cat, dotted):
    parts = tuple(dotted.split("."))
    for i in range(1, len(parts) + 1):
        cat.create_namespace_if_not_exists(parts[:i])
    return parts


def fields(table):
    return {f.name: f.field_id for f in table.schema().fields}


def snapshot(table):
    s = table.current_snapshot()
    return None if s is None else str(s.snapshot_id)


def state(step, table):
    return {"step": step, "uuid": str(table.metadata.table_uuid), "snapshot": snapshot(table),
            "snapshots": [str(s.snapshot_id) for s in table.snapshots()], "fields": fields(table),
            "schemaId": table.schema().schema_id, "metadataLocation": table.metadata_location,
            "properties": dict(table.properties)}


def scenario(cat, dotted):
    ns = ensure_namespace(cat, dotted)
    schema = Schema(
        NestedField(1, "order_id", LongType(), required=False),
        NestedField(2, "customer", StringType(), required=False),
        NestedField(3, "amount", DoubleType(), required=False),
        NestedField(4, "ship", StructType(NestedField(5, "city", StringType(), required=False)), required=False),
    )
    ident = ns + ("orders",)
    t = cat.create_table(ident, schema=schema, properties={"owner": "sales-team"})
    steps = [state("create", t)]

    ship = pa.struct([pa.field("city", pa.string())])
    arrow = pa.schema([pa.field("order_id", pa.int64()), pa.field("customer", pa.string()),
                       pa.field("amount", pa.float64()), pa.field("ship", ship)])
    for n, step in ((2, "append-1"), (3, "append-2")):
        rows = {"order_id": list(range(n)), "customer": ["c%d" % i for i in range(n)],
                "amount": [float(i) for i in range(n)], "ship": [{"city": "x"}] * n}
        t.append(pa.Table.from_pydict(rows, schema=arrow))
        t = cat.load_table(ident)
        steps.append(state(step, t))
    if len(steps[2]["snapshots"]) != 2 or steps[1]["snapshot"] == steps[2]["snapshot"]:
        fail("two appends should make two snapshots, got %s" % steps[2]["snapshots"])

    with t.update_schema() as u:
        u.rename_column("customer", "customer_name")
    t = cat.load_table(ident)
    steps.append(state("rename-column", t))
    if steps[-1]["fields"].get("customer_name") != steps[0]["fields"]["customer"]:
        fail("a renamed column keeps its field id: %s" % steps[-1]["fields"])

    with t.update_schema() as u:
        u.delete_column("amount")
    t = cat.load_table(ident)
    with t.update_schema() as u:
        u.add_column("amount", DoubleType())
    t = cat.load_table(ident)
    steps.append(state("drop-readd-column", t))
    if steps[-1]["fields"]["amount"] == steps[0]["fields"]["amount"]:
        fail("a column dropped and re-added gets a new field id: %s" % steps[-1]["fields"])

    renamed = ns + ("orders_v2",)
    cat.rename_table(ident, renamed)
    t = cat.load_table(renamed)
    steps.append(state("rename-table", t))
    if steps[-1]["uuid"] != steps[0]["uuid"]:
        fail("a renamed table keeps its uuid: %s -> %s" % (steps[0]["uuid"], steps[-1]["uuid"]))
    if cat.table_exists(ident):
        fail("the old name should be gone after the rename")
    print(json.dumps({"namespace": list(ns), "table": list(renamed), "steps": steps}))


def step(cat, name, dotted):
    ns = ensure_namespace(cat, dotted)
    ident, renamed = ns + ("orders",), ns + ("orders_v2",)
    if name == "create":
        schema = Schema(
            NestedField(1, "order_id", LongType(), required=False),
            NestedField(2, "customer", StringType(), required=False),
            NestedField(3, "amount", DoubleType(), required=False),
            NestedField(4, "ship", StructType(NestedField(5, "city", StringType(), required=False)), required=False),
        )
        t = cat.create_table(ident, schema=schema, properties={"owner": "sales-team"})
    elif name in ("append-1", "append-2"):
        t = cat.load_table(ident)
        n = 2 if name == "append-1" else 3
        rows = {"order_id": list(range(n)), "customer": ["c%d" % i for i in range(n)],
                "amount": [float(i) for i in range(n)], "ship": [{"city": "x"}] * n}
        t.append(pa.Table.from_pydict(rows, schema=t.schema().as_arrow()))
        t = cat.load_table(ident)
    elif name == "append-evolved":
        # an append with whatever columns the table has now (after the rename and the re-add)
        t = cat.load_table(ident)
        arrow = t.schema().as_arrow()
        rows = {f.name: ([1, 2] if f.name == "order_id" else [None, None]) for f in arrow}
        t.append(pa.Table.from_pydict(rows, schema=arrow))
        t = cat.load_table(ident)
    elif name == "set-tags":
        # catalog tags (ADR 0075): the table's and a column's, as table properties
        t = cat.load_table(ident)
        with t.transaction() as tx:
            tx.set_properties({"headwater.tags": "finance, tier=gold", "headwater.column-tags.customer": "pii.name"})
        t = cat.load_table(ident)
    elif name == "unset-tags":
        t = cat.load_table(ident)
        with t.transaction() as tx:
            tx.remove_properties("headwater.tags", "headwater.column-tags.customer")
        t = cat.load_table(ident)
    elif name == "rename-column":
        t = cat.load_table(ident)
        with t.update_schema() as u:
            u.rename_column("customer", "customer_name")
        t = cat.load_table(ident)
    elif name == "drop-readd-column":
        t = cat.load_table(ident)
        before = fields(t)["amount"]
        with t.update_schema() as u:
            u.delete_column("amount")
        t = cat.load_table(ident)
        with t.update_schema() as u:
            u.add_column("amount", DoubleType())
        t = cat.load_table(ident)
        if fields(t)["amount"] == before:
            fail("a column dropped and re-added gets a new field id: %s" % fields(t))
    elif name == "rename-table":
        cat.rename_table(ident, renamed)
        t = cat.load_table(renamed)
    elif name == "drop-table":
        cat.drop_table(renamed)
        print(json.dumps({"step": name}))
        return
    else:
        fail("unknown step %r" % name)
    print(json.dumps(state(name, t)))


def tables(cat, dotted, n):
    ns = ensure_namespace(cat, dotted)
    schema = Schema(NestedField(1, "id", LongType(), required=False))
    for i in range(n):
        cat.create_table(ns + ("t%04d" % i,), schema=schema)
    print(json.dumps({"namespace": list(ns), "tables": n}))


def namespaces(cat, dotted, n):
    ns = ensure_namespace(cat, dotted)
    for i in range(n):
        cat.create_namespace(ns + ("n%04d" % i,))
    print(json.dumps({"namespace": list(ns), "children": n}))


def table(cat, dotted, name):
    ns = ensure_namespace(cat, dotted)
    t = cat.create_table(ns + (name,), schema=Schema(NestedField(1, "id", LongType(), required=False)))
    print(json.dumps(state("table", t)))


def namespace_owner(cat, dotted, owner):
    ns = ensure_namespace(cat, dotted)
    cat.update_namespace_properties(ns, updates={"owner": owner})
    print(json.dumps({"namespace": list(ns), "owner": owner}))


def append(cat, dotted, name):
    t = cat.load_table(tuple(dotted.split(".")) + (name,))
    before = snapshot(t)
    t.append(pa.Table.from_pylist([{}], schema=t.schema().as_arrow()))
    if snapshot(t) == before:
        fail("an append makes a new snapshot")
    print(json.dumps(state("append", t)))


def main(argv):
    if len(argv) < 4:
        fail("usage: pyiceberg_driver.py URI scenario NAMESPACE | tables NAMESPACE N | namespaces PARENT N | append NAMESPACE T | table NAMESPACE T | namespace-owner NAMESPACE OWNER")
    cat = load_catalog("fixture", **{"type": "rest", "uri": argv[1]})
    if argv[2] == "scenario":
        scenario(cat, argv[3])
    elif argv[2] == "tables" and len(argv) == 5:
        tables(cat, argv[3], int(argv[4]))
    elif argv[2] == "namespaces" and len(argv) == 5:
        namespaces(cat, argv[3], int(argv[4]))
    elif argv[2] == "table" and len(argv) == 5:
        table(cat, argv[3], argv[4])
    elif argv[2] == "namespace-owner" and len(argv) == 5:
        namespace_owner(cat, argv[3], argv[4])
    elif argv[2] == "append" and len(argv) == 5:
        append(cat, argv[3], argv[4])
    elif argv[2] == "step" and len(argv) == 5:
        step(cat, argv[3], argv[4])
    else:
        fail("unknown command %r" % argv[2:])


if __name__ == "__main__":
    main(sys.argv)
