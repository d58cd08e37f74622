package wpsite

import (
	"fmt"
	"testing"
)

// PostSMTPLogTable is Post SMTP's log table as
// PostmanEmailLogs::install_table() creates it: every field LONGTEXT but
// time, a BIGINT of current_time('timestamp'). Create it with CreateTable.
const PostSMTPLogTable = "CREATE TABLE IF NOT EXISTS `{prefix}post_smtp_logs` (\n" +
	"`id` bigint(20) NOT NULL AUTO_INCREMENT,\n" +
	"`solution` longtext DEFAULT NULL, `success` longtext DEFAULT NULL, `from_header` longtext DEFAULT NULL,\n" +
	"`to_header` longtext DEFAULT NULL, `cc_header` longtext DEFAULT NULL, `bcc_header` longtext DEFAULT NULL,\n" +
	"`reply_to_header` longtext DEFAULT NULL, `transport_uri` longtext DEFAULT NULL, `original_to` longtext DEFAULT NULL,\n" +
	"`original_subject` longtext DEFAULT NULL, `original_message` longtext DEFAULT NULL, `original_headers` longtext DEFAULT NULL,\n" +
	"`session_transcript` longtext DEFAULT NULL, `time` BIGINT(20) DEFAULT NULL,\n" +
	"PRIMARY KEY (`id`)) ENGINE=InnoDB {charset};"

// CreateTable runs a plugin's CREATE TABLE through $wpdb, as the plugins
// build it: "{prefix}" in ddl is replaced by the site's table prefix and
// "{charset}" by $wpdb->get_charset_collate().
func (s *Site) CreateTable(t testing.TB, ddl string) {
	t.Helper()
	s.PHP(t, fmt.Sprintf(`global $wpdb;
$sql = strtr( %s, array( '{prefix}' => $wpdb->prefix, '{charset}' => $wpdb->get_charset_collate() ) );
if ( false === $wpdb->query( $sql ) ) {
	wpsite_fail( 'create table: ' . $wpdb->last_error );
}
`, PHPString(ddl)))
}
