package admin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mailsvc/mailsvc/internal/testenv"
	"github.com/mailsvc/mailsvc/test/servicetest"
	"github.com/mailsvc/mailsvc/test/wpsite"
)

// The names of a German translation of WordPress's own text domain, as
// a language pack gives them.
var (
	germanMonths = []string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
	germanDays   = []string{"Sonntag", "Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag"}
	englishDays  = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
)

// germanPO is a small translation of WordPress's default text domain
// into German: the months, the weekdays, the abbreviations of March and
// Monday, and am/pm, with the contexts WP_Locale asks them in.
func germanPO() string {
	var b strings.Builder
	b.WriteString("msgid \"\"\nmsgstr \"\"\n\"Content-Type: text/plain; charset=UTF-8\\n\"\n\n")
	for i, m := range []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"} {
		fmt.Fprintf(&b, "msgid %q\nmsgstr %q\n\n", m, germanMonths[i])
	}
	for i, d := range englishDays {
		fmt.Fprintf(&b, "msgid %q\nmsgstr %q\n\n", d, germanDays[i])
	}
	b.WriteString("msgctxt \"March abbreviation\"\nmsgid \"Mar\"\nmsgstr \"Mär\"\n\n")
	b.WriteString("msgid \"Mon\"\nmsgstr \"Mo.\"\n\nmsgid \"am\"\nmsgstr \"vorm.\"\n\nmsgid \"pm\"\nmsgstr \"nachm.\"\n")
	return b.String()
}

// TestDatesInTheSitesLanguage: a German site's Mail page shows the Email
// logs' dates with WordPress's German month and day names, which the
// bridge hands to the screens; while the site's language pack is not
// installed, with the English ones, as WordPress itself does. The
// screens' formatter writes every name it is given (months, their
// abbreviations, weekdays, am/pm) and a declined month after a day number.
func TestDatesInTheSitesLanguage(t *testing.T) {
	if testing.Short() {
		t.Skip("real WordPress test: not in -short mode")
	}
	msgfmt, err := exec.LookPath("msgfmt")
	if err != nil {
		testenv.Missing(t, "msgfmt is not installed (Debian package gettext)")
	}
	b := newBrowser(t)
	s := startBridgeSiteWith(t, wpsite.Options{Prefix: "wpd_", EnvironmentType: "local", ExtraConfig: "define( 'MAILSVC_ENVIRONMENT', 'production' );"}, "dates test")
	// German chosen as the site's language, its pack not installed (yet,
	// or removed since): Settings → General offers only installed
	// languages, so the option is written past that check.
	s.site.PHP(t, `add_filter( 'sanitize_option_WPLANG', function ( $value, $option, $asked ) { return $asked; }, 10, 3 );
update_option( 'WPLANG', 'de_DE' ); update_option( 'date_format', 'l, j. F Y' ); update_option( 'time_format', 'G:i' ); update_option( 'timezone_string', 'Europe/Berlin' );`)
	if got := s.site.PHP(t, `echo get_locale();`); got != "de_DE" {
		t.Fatalf("the site's locale is %q, want de_DE", got)
	}
	if out := s.site.PHP(t, `var_export( wp_mail( 'leser@example.de', 'Bestellung', 'Danke' ) );`); !strings.Contains(out, "true") {
		t.Fatalf("wp_mail: %s", out)
	}
	var logs []struct {
		ID        int64     `json:"id"`
		CreatedAt time.Time `json:"created_at"`
	}
	servicetest.Call(t, "GET", s.svc.Base+"/logs?per_page=1", "", s.admin).JSON(t, &logs)
	if len(logs) != 1 {
		t.Fatalf("the logs: %+v", logs)
	}
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	at := logs[0].CreatedAt.In(berlin)
	browserLogin(t, b, s.site, s.site.AdminLogin)

	// createdInFrame opens wp-admin's Mail → Email logs and reads the
	// log's Created cell.
	createdInFrame := func(what string) string {
		t.Helper()
		var got string
		b.run(what, chromedp.Navigate(s.site.SiteURL+"/wp-admin/admin.php?page=mailsvc"),
			chromedp.WaitVisible("iframe#mailsvc-screens", chromedp.ByQuery),
			frameAct(`a[href="#/logs"]`, "el.click()"),
			framePoll(fmt.Sprintf(`doc.querySelector('tr:has(a[href="#/logs/%d"]) td[data-colname="Created"]')`, logs[0].ID)),
			chromedp.Evaluate(fmt.Sprintf(`(() => { %s return doc.querySelector('tr:has(a[href="#/logs/%d"]) td[data-colname="Created"]').innerText.trim(); })()`,
				inFrameJS, logs[0].ID), &got))
		return got
	}

	// The language is set but its pack is not installed: English names.
	english := fmt.Sprintf("%s, %d. %s %d %d:%02d", englishDays[at.Weekday()], at.Day(), at.Month(), at.Year(), at.Hour(), at.Minute())
	if got := createdInFrame("the Email logs without the German pack"); got != english {
		t.Errorf("without the language pack the log was created %q, want %q", got, english)
	}

	// The German pack installed: German names.
	languages := filepath.Join(s.site.ContentDir, "languages")
	if err := os.MkdirAll(languages, 0o755); err != nil {
		t.Fatal(err)
	}
	po := filepath.Join(t.TempDir(), "de_DE.po")
	if err := os.WriteFile(po, []byte(germanPO()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(msgfmt, "-o", filepath.Join(languages, "de_DE.mo"), po).CombinedOutput(); err != nil {
		t.Fatalf("msgfmt: %v\n%s", err, out)
	}
	german := fmt.Sprintf("%s, %d. %s %d %d:%02d", germanDays[at.Weekday()], at.Day(), germanMonths[at.Month()-1], at.Year(), at.Hour(), at.Minute())
	if got := createdInFrame("the Email logs with the German pack"); got != german {
		t.Errorf("with the German pack the log was created %q, want %q", got, german)
	}

	// The formatter with the names the Mail page handed over (read from
	// the frame's address) and with a declining language's.
	const names = `JSON.parse(new URLSearchParams(frame.src.split("#")[1]).get("dates"))`
	polish := `{ month: ["Styczeń","Luty","Marzec","Kwiecień","Maj","Czerwiec","Lipiec","Sierpień","Wrzesień","Październik","Listopad","Grudzień"],
		month_genitive: ["stycznia","lutego","marca","kwietnia","maja","czerwca","lipca","sierpnia","września","października","listopada","grudnia"], decline: true }`
	formats := []struct {
		format, names, want string
	}{
		{"D, j. M Y g:i a", names, "Mo., 2. Mär 2026 4:04 nachm."},
		{`l, \d\e\n j. F Y, A`, names, "Montag, den 2. März 2026, PM"},
		{"j F Y", polish, "2 marca 2026"},
		{"F Y", polish, "Marzec 2026"},
		{"D, j M Y g:i A", `{}`, "Mon, 2 Mar 2026 4:04 PM"},
	}
	for _, f := range formats {
		var got string
		b.run("format "+f.format, chromedp.Evaluate(fmt.Sprintf(`(() => { const frame = document.querySelector("iframe#mailsvc-screens");
			return import(frame.src.split("#")[0] + "js/ui.js").then((m) => m.formatDate(new Date("2026-03-02T15:04:05Z"), %q, "Europe/Berlin", 0, m.readDateNames(%s))); })()`,
			f.format, f.names), &got, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if got != f.want {
			t.Errorf("formatDate(%q) with the names %s = %q, want %q", f.format, f.names, got, f.want)
		}
	}
}
