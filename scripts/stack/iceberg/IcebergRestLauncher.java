// The Iceberg REST catalog fixture for Headwater's stack: Apache Iceberg's own RESTCatalogServlet (iceberg-core's
// tests jar) over a JdbcCatalog on a sqlite file, served by Jetty on 127.0.0.1 only. Iceberg's stock
// RESTCatalogServer.main binds every interface, keeps its catalog in memory and compresses answers (which breaks
// ETags, below); this launcher does none of these.
//
// Compiled and started by scripts/stack/stack.sh:
//   java -cp '<jars>/*:<classes>' IcebergRestLauncher <port> <state-dir>
// State: <state-dir>/catalog.sqlite (the catalog) and <state-dir>/warehouse (table metadata and data files).
// It prints "iceberg-rest: ready on 127.0.0.1:<port>" once Jetty accepts connections.

import java.io.File;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.CatalogUtil;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalogAdapter;
import org.apache.iceberg.rest.RESTCatalogServlet;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public final class IcebergRestLauncher {
  /** The only address the fixture listens on. */
  private static final String HOST = "127.0.0.1";
  /** The catalog's name inside the server (clients never see it). */
  private static final String CATALOG_NAME = "headwater_fixture";
  /** One JDBC connection: sqlite serialises writers anyway, and one connection never meets SQLITE_BUSY. */
  private static final String JDBC_POOL_SIZE = "1";

  private IcebergRestLauncher() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: IcebergRestLauncher <port> <state-dir>");
      System.exit(2);
    }
    int port = Integer.parseInt(args[0]);
    File dir = new File(args[1]).getAbsoluteFile();
    File warehouse = new File(dir, "warehouse");
    if (!warehouse.isDirectory() && !warehouse.mkdirs()) {
      throw new IllegalStateException("cannot create the warehouse folder " + warehouse);
    }

    Map<String, String> props = new HashMap<>();
    props.put(CatalogProperties.CATALOG_IMPL, JdbcCatalog.class.getName());
    props.put(CatalogProperties.URI, "jdbc:sqlite:file:" + new File(dir, "catalog.sqlite").getPath());
    props.put("jdbc.schema-version", "V1"); // V1 stores views too; V0 is the pre-1.5 table-only schema
    props.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse.getPath());
    props.put(CatalogProperties.CLIENT_POOL_SIZE, JDBC_POOL_SIZE);
    Catalog catalog = CatalogUtil.buildIcebergCatalog(CATALOG_NAME, props, new Configuration());

    ServletContextHandler context = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    context.addServlet(new ServletHolder(new RESTCatalogServlet(new RESTCatalogAdapter(catalog))), "/*");
    // No CompressionHandler (Iceberg's RESTCatalogServer has one): Jetty's suffixes every ETag with "--gzip" and
    // strips the suffix from If-None-Match only for quoted tags, and the servlet's ETags are unquoted, so a
    // client that accepts gzip (Go's, by default) would never get its 304 (ADR 0039).

    Server server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost(HOST);
    connector.setPort(port);
    server.addConnector(connector);
    server.setHandler(context);
    server.setStopAtShutdown(true);
    server.start();
    System.out.println("iceberg-rest: ready on " + HOST + ":" + port + " (catalog " + dir + ")");
    server.join();
  }
}
