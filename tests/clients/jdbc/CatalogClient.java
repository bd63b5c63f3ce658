// A pgjdbc client for weir serve's catalog tests, run as a single source file:
//   java -cp postgresql.jar CatalogClient.java <jdbc url> <user> <password> <table>
// It prints one line per observation (tab-separated) for the test to compare exactly.
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;

public class CatalogClient {
  public static void main(String[] args) throws Exception {
    String url = args[0];
    String table = args[3];
    try (Connection conn = DriverManager.getConnection(url, args[1], args[2])) {
      // One statement, prepared on the server from the first execution (prepareThreshold=1)
      // and reused with new values.
      try (PreparedStatement ps =
          conn.prepareStatement("SELECT id, name FROM " + table + " WHERE id = ? OR name = ? "
              + "ORDER BY id")) {
        for (int i = 1; i <= 10; i++) {
          ps.setLong(1, i);
          ps.setString(2, "name " + (i * 10));
          StringBuilder line = new StringBuilder("prepared\t" + i);
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
              line.append('\t').append(rs.getLong(1)).append('=').append(rs.getString(2));
            }
          }
          System.out.println(line);
        }
      }
      // Ten inserts sent as one batch.
      try (PreparedStatement ps =
          conn.prepareStatement("INSERT INTO " + table + " (id, name) VALUES (?, ?)")) {
        for (int i = 0; i < 10; i++) {
          ps.setLong(1, 1000 + i);
          ps.setString(2, "batch " + i);
          ps.addBatch();
        }
        int[] counts = ps.executeBatch();
        int sum = 0;
        for (int c : counts) sum += c;
        System.out.println("batch\t" + counts.length + "\t" + sum);
      }
      try (Statement st = conn.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) FROM " + table + " WHERE id >= 1000")) {
        rs.next();
        System.out.println("count\t" + rs.getLong(1));
      }
      DatabaseMetaData meta = conn.getMetaData();
      System.out.println("product\t" + meta.getDatabaseProductName() + "\t"
          + meta.getDatabaseMajorVersion());
      try (ResultSet rs = meta.getSchemas()) {
        while (rs.next()) System.out.println("schema\t" + rs.getString("TABLE_SCHEM"));
      }
      try (ResultSet rs = meta.getTables(null, "public", "%", new String[] {"TABLE", "VIEW"})) {
        while (rs.next()) {
          System.out.println("table\t" + rs.getString("TABLE_SCHEM") + "\t"
              + rs.getString("TABLE_NAME") + "\t" + rs.getString("TABLE_TYPE"));
        }
      }
      try (ResultSet rs = meta.getColumns(null, "public", table, "%")) {
        while (rs.next()) {
          System.out.println("column\t" + rs.getString("TABLE_NAME") + "\t"
              + rs.getString("COLUMN_NAME") + "\t" + rs.getInt("DATA_TYPE") + "\t"
              + rs.getString("TYPE_NAME") + "\t" + rs.getInt("COLUMN_SIZE") + "\t"
              + rs.getInt("DECIMAL_DIGITS") + "\t" + rs.getInt("NULLABLE") + "\t"
              + rs.getInt("ORDINAL_POSITION"));
        }
      }
    }
  }
}
