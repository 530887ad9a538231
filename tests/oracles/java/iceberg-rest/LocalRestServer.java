// Iceberg's own REST catalog server (the classes of the apache/iceberg-rest-fixture image,
// org.apache.iceberg.rest.RESTCatalogServer), bound to 127.0.0.1 only: the fixture's main()
// listens on every interface and has no host option, so this launcher builds the same
// backend catalog (from the same CATALOG_* environment, through the fixture's own code) and
// serves the same servlet on a loopback connector. Port 0 (CATALOG_REST_PORT=0) picks a free
// port; "READY <port>" on stdout says the server is up. Run as a single-file program:
//   java -cp "$(cat .oracles/iceberg-rest.classpath)" tests/oracles/java/iceberg-rest/LocalRestServer.java
import jakarta.servlet.http.HttpServlet;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

public class LocalRestServer {
  private static final String PKG = "org.apache.iceberg.rest.";

  public static void main(String[] args) throws Exception {
    Class<?> serverClass = Class.forName(PKG + "RESTCatalogServer");
    Constructor<?> make = serverClass.getDeclaredConstructor(Map.class);
    make.setAccessible(true);
    Object fixture = make.newInstance(new HashMap<String, String>());
    Method init = serverClass.getDeclaredMethod("initializeBackendCatalog");
    init.setAccessible(true);
    Object context = init.invoke(fixture);

    Constructor<?> adapterMake = Class.forName(PKG + "RESTServerCatalogAdapter")
        .getDeclaredConstructors()[0];
    adapterMake.setAccessible(true);
    Object adapter = adapterMake.newInstance(context);
    HttpServlet servlet = (HttpServlet) Class.forName(PKG + "RESTCatalogServlet")
        .getConstructor(Class.forName(PKG + "RESTCatalogAdapter")).newInstance(adapter);

    Method configuration = context.getClass().getDeclaredMethod("configuration");
    configuration.setAccessible(true);
    @SuppressWarnings("unchecked")
    Map<String, String> conf = (Map<String, String>) configuration.invoke(context);
    int port = Integer.parseInt(conf.getOrDefault("rest.port", "8181"));

    Server http = new Server();
    ServerConnector connector = new ServerConnector(http);
    connector.setHost("127.0.0.1");
    connector.setPort(port);
    http.addConnector(connector);
    ServletContextHandler handler = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
    handler.addServlet(new ServletHolder(servlet), "/*");
    http.setHandler(handler);
    http.start();
    System.out.println("READY " + connector.getLocalPort());
    System.out.flush();
    http.join();
  }
}
