"""Emits a small real lineage with the OpenLineage Python client (openlineage-python), over HTTP or Kafka.

usage: ol_client.py http <base-url> <api-key> <job-namespace> <dataset-namespace>
       ol_client.py kafka <bootstrap> <topic> <job-namespace> <dataset-namespace>
Prints the run ids it emitted, one per line.
"""
import sys
import uuid
from datetime import datetime, timezone

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import schema_dataset

PRODUCER = "https://github.com/headwater-data/headwater/e2e/ol_client.py"


def transport(args):
    if args[0] == "http":
        from openlineage.client.transport.http import ApiKeyTokenProvider, HttpConfig, HttpTransport

        auth = ApiKeyTokenProvider({"apiKey": args[2]})
        cfg = HttpConfig(url=args[1], endpoint="api/v1/lineage", compression="gzip", auth=auth)
        return HttpTransport(cfg), args[3:]
    from openlineage.client.transport.kafka import KafkaConfig, KafkaTransport

    cfg = KafkaConfig(config={"bootstrap.servers": args[1], "acks": "all"}, topic=args[2], flush=True)
    return KafkaTransport(cfg), args[3:]


def main():
    t, rest = transport(sys.argv[1:])
    job_ns, ds_ns = rest
    client = OpenLineageClient(transport=t)
    schema = schema_dataset.SchemaDatasetFacet(fields=[
        schema_dataset.SchemaDatasetFacetFields(name="id", type="long"),
        schema_dataset.SchemaDatasetFacetFields(name="amount", type="decimal"),
    ])
    run_id = str(uuid.uuid4())
    job = Job(namespace=job_ns, name="python_client_job")
    inputs = [InputDataset(namespace=ds_ns, name="in/orders", facets={"schema": schema})]
    outputs = [OutputDataset(namespace=ds_ns, name="out/orders", facets={"schema": schema})]
    for state in (RunState.START, RunState.COMPLETE):
        client.emit(RunEvent(eventType=state, eventTime=datetime.now(timezone.utc).isoformat(),
                             run=Run(runId=run_id), job=job, producer=PRODUCER, inputs=inputs, outputs=outputs))
    client.transport.close() if hasattr(client.transport, "close") else None
    print(run_id)


if __name__ == "__main__":
    main()
