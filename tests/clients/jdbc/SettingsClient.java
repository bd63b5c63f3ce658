// A pgjdbc client for weir serve's settings tests, run as a single source file:
//   java -Duser.timezone=<zone> -cp postgresql.jar SettingsClient.java <jdbc url> <user> <password>
// pgjdbc sends extra_float_digits=3, DateStyle=ISO, TimeZone (the JVM's) and ApplicationName
// in its startup packet; the client prints what the session shows (tab-separated lines).
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;

public class SettingsClient {
  public static void main(String[] args) throws Exception {
    try (Connection conn = DriverManager.getConnection(args[0], args[1], args[2]);
        Statement st = conn.createStatement()) {
      for (String name : new String[] {"extra_float_digits", "application_name", "TimeZone",
               "DateStyle", "client_encoding"}) {
        try (ResultSet rs = st.executeQuery("SHOW " + name)) {
          rs.next();
          System.out.println("show\t" + name + "\t" + rs.getString(1));
        }
      }
      try (ResultSet rs = st.executeQuery(
               "SELECT TIMESTAMPTZ '2024-07-01 12:00:00+00', 0.1::float8 + 0.2::float8")) {
        rs.next();
        System.out.println("values\t" + rs.getString(1) + "\t" + rs.getString(2));
      }
      try (ResultSet rs = st.executeQuery(
               "SELECT application_name, state, backend_type FROM pg_stat_activity "
               + "WHERE pid = pg_backend_pid()")) {
        rs.next();
        System.out.println("activity\t" + rs.getString(1) + "\t" + rs.getString(2) + "\t"
            + rs.getString(3));
      }
    }
  }
}
