// A pgjdbc client for weir serve's read-role test, run as a single source file:
//   java -cp postgresql.jar WriteRoutes.java <jdbc url> <user> <password> <routes file>
// The routes file has one route per line: `multi<TAB>step<TAB>step...`, each step
// `r|o<sql>` (r: must be refused), with \n, \t and \\ escaped. Every route runs on a fresh
// connection in each mode (simple protocol; extended with unnamed statements; extended with
// named statements), plus COPY FROM STDIN; one output line per route and mode:
// `mode<TAB>route<TAB>outcome,outcome,...` where an outcome is `ok` or the SQLSTATE.
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.copy.CopyManager;
import org.postgresql.core.BaseConnection;

public class WriteRoutes {
  static String unescape(String text) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\\' && i + 1 < text.length()) {
        char n = text.charAt(++i);
        out.append(n == 'n' ? '\n' : n == 't' ? '\t' : n);
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  static String run(Connection conn, String mode, String sql) {
    try {
      if (mode.equals("named")) {
        try (var ps = conn.prepareStatement(sql)) {
          ps.execute();
        }
      } else {
        try (Statement st = conn.createStatement()) {
          st.execute(sql);
        }
      }
      return "ok";
    } catch (SQLException e) {
      return e.getSQLState();
    }
  }

  static String copy(Connection conn) {
    try {
      new CopyManager((BaseConnection) conn).copyIn("COPY t FROM STDIN",
          new StringReader("99\tcopied\n"));
      return "ok";
    } catch (Exception e) {
      return e instanceof SQLException ? ((SQLException) e).getSQLState() : e.toString();
    }
  }

  public static void main(String[] args) throws Exception {
    String url = args[0];
    List<String> lines = Files.readAllLines(Path.of(args[3]));
    String[][] modes = {{"simple", "&preferQueryMode=simple"}, {"unnamed", "&prepareThreshold=0"},
        {"named", "&prepareThreshold=1"}};
    for (String[] mode : modes) {
      for (int r = 0; r < lines.size(); r++) {
        String[] fields = lines.get(r).split("\t", -1);
        List<String> outcome = new ArrayList<>();
        try (Connection conn = DriverManager.getConnection(url + mode[1], args[1], args[2])) {
          for (int s = 1; s < fields.length; s++) {
            outcome.add(run(conn, mode[0], unescape(fields[s].substring(1))));
          }
        }
        System.out.println(mode[0] + "\t" + r + "\t" + String.join(",", outcome));
      }
    }
    try (Connection conn = DriverManager.getConnection(url, args[1], args[2])) {
      System.out.println("copy\tCOPY FROM STDIN\t" + copy(conn));
      String begin = run(conn, "unnamed", "BEGIN");
      String copied = copy(conn);
      System.out.println("copy\tCOPY FROM STDIN in a block\t" + begin + "," + copied + ","
          + run(conn, "unnamed", "ROLLBACK"));
    }
  }
}
