// Paimon's own REST catalog server (org.apache.paimon.rest.RESTCatalogServer from paimon-core's
// tests jar) over a filesystem catalog in a local directory, on okhttp's MockWebServer, which
// binds the loopback address. Arguments: DATA_DIR WAREHOUSE_NAME TOKEN. Prints
// "READY <url>" when serving; stops on stdin EOF.
import java.util.HashMap;
import java.util.Map;
import org.apache.paimon.rest.RESTCatalogServer;
import org.apache.paimon.rest.auth.BearTokenAuthProvider;
import org.apache.paimon.rest.responses.ConfigResponse;

public class LocalPaimonRestServer {
  public static void main(String[] args) throws Exception {
    String dataPath = args[0];
    String warehouse = args[1];
    String token = args[2];
    Map<String, String> defaults = new HashMap<>();
    defaults.put("prefix", "paimon");
    defaults.put("warehouse", warehouse);
    ConfigResponse config = new ConfigResponse(defaults, new HashMap<>());
    RESTCatalogServer server =
        new RESTCatalogServer(dataPath, new BearTokenAuthProvider(token), config, warehouse);
    server.start();
    System.out.println("READY " + server.getUrl());
    System.out.flush();
    while (System.in.read() != -1) {
      // serve until the parent closes stdin
    }
    server.shutdown();
    System.exit(0);
  }
}
