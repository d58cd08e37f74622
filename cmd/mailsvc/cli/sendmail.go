package cli

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/mail"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/mailparse"
	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/app/delivery"
	"github.com/mailsvc/mailsvc/core"
)

// Exit codes of `mailsvc sendmail`, from sysexits.h as sendmail uses them.
const (
	exitUsage    = 64 // EX_USAGE: bad command line
	exitDataErr  = 65 // EX_DATAERR: the message cannot be queued as given
	exitTempFail = 75 // EX_TEMPFAIL: the database is unreachable; try again
)

// sendmailMaxBytes bounds the message read from standard input.
const sendmailMaxBytes = 64 << 20

// sendmailTimeout bounds opening the database and queueing the message.
const sendmailTimeout = 60 * time.Second

const sendmailUsage = `Usage: mailsvc sendmail [-t] [-i|-oi] [-f sender] [-F "full name"] [recipient ...]

Reads an RFC 5322 message on standard input and queues it in the mailsvc
database; the running service delivers it. For PHP's sendmail_path:

    sendmail_path = "/usr/local/bin/mailsvc sendmail -t -i"

  -t          take recipients from the To, Cc and Bcc headers (the Bcc header
              is removed); recipients given as arguments are added
  -i, -oi     a line with a single dot does not end the message
  -f ADDR     envelope sender; the From address when the message has none
  -r ADDR     same as -f
  -F NAME     full name of the sender, used with -f when there is no From
  Accepted and ignored: -odi -odb -oem -oee -o<any> -bm -v -U -G -m -n and
  -B -N -R -V -L -X -h -C -O with their value.

Exit status: 0 queued; 64 bad usage or no recipients; 65 the message is
invalid; 75 the database is unreachable (try again later).
`

// sendmailOptions is a parsed sendmail command line.
type sendmailOptions struct {
	fromHeaders bool   // -t
	ignoreDots  bool   // -i, -oi
	sender      string // -f, -r
	fullName    string // -F
	recipients  []string
	help        bool
}

// sendmailValueFlags are the flags that take a value (attached or as the
// next argument) and are ignored.
var sendmailValueFlags = map[byte]bool{'B': true, 'N': true, 'R': true, 'V': true, 'L': true, 'X': true, 'h': true, 'C': true, 'O': true}

// sendmailNoopFlags are single-letter flags that are accepted and ignored.
var sendmailNoopFlags = map[byte]bool{'v': true, 'U': true, 'G': true, 'm': true, 'n': true}

// parseSendmailArgs parses sendmail's command line. Errors are usage errors.
func parseSendmailArgs(args []string) (sendmailOptions, error) {
	var o sendmailOptions
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--help" {
			o.help = true
			continue
		}
		if arg == "--" {
			o.recipients = append(o.recipients, args[i+1:]...)
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			o.recipients = append(o.recipients, arg)
			continue
		}
		// value returns the flag's value: the rest of arg, or the next
		// argument.
		value := func() (string, error) {
			if len(arg) > 2 {
				return arg[2:], nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("option %s requires a value", arg)
			}
			i++
			return args[i], nil
		}
		switch c := arg[1]; {
		case c == 'f' || c == 'r':
			v, err := value()
			if err != nil {
				return o, err
			}
			o.sender = strings.TrimSpace(v)
		case c == 'F':
			v, err := value()
			if err != nil {
				return o, err
			}
			o.fullName = strings.TrimSpace(v)
		case c == 'o':
			if arg == "-oi" {
				o.ignoreDots = true
			} else if arg == "-o" {
				return o, fmt.Errorf("option -o requires a value")
			}
			// -odi, -odb, -oem, -oee, -oQ... are sendmail delivery and
			// queue options that do not apply.
		case c == 'b':
			if arg != "-bm" {
				return o, fmt.Errorf("mode %s is not supported: only -bm (read a message on standard input) is", arg)
			}
		case sendmailValueFlags[c]:
			if _, err := value(); err != nil {
				return o, err
			}
		default:
			// -t, -i and the no-op letters, possibly combined (-ti).
			for j := 1; j < len(arg); j++ {
				switch l := arg[j]; {
				case l == 't':
					o.fromHeaders = true
				case l == 'i':
					o.ignoreDots = true
				case sendmailNoopFlags[l]:
				default:
					return o, fmt.Errorf("unknown option %s", arg)
				}
			}
		}
	}
	return o, nil
}

// readSendmailInput reads the message from r: up to end of input or, unless
// ignoreDots, a line holding a single dot. It fails beyond max bytes.
func readSendmailInput(r io.Reader, ignoreDots bool, max int64) ([]byte, error) {
	lr := &io.LimitedReader{R: r, N: max + 1}
	var data []byte
	var err error
	if ignoreDots {
		data, err = io.ReadAll(lr)
	} else {
		var buf bytes.Buffer
		br := bufio.NewReader(lr)
		for {
			line, rerr := br.ReadBytes('\n')
			if string(bytes.TrimRight(line, "\r\n")) == "." {
				break
			}
			buf.Write(line)
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				err = rerr
				break
			}
		}
		data = buf.Bytes()
	}
	if err != nil {
		return nil, fmt.Errorf("read the message: %w", err)
	}
	if int64(len(data)) > max || lr.N <= 0 {
		return nil, fmt.Errorf("the message is larger than %d bytes", max)
	}
	return data, nil
}

// sendmailRecipients parses recipient arguments; each may be an address
// list ("a@example.org, B <b@example.org>").
func sendmailRecipients(args []string) ([]core.Address, error) {
	var out []core.Address
	for _, a := range args {
		if strings.TrimSpace(a) == "" {
			continue
		}
		list, err := mail.ParseAddressList(a)
		if err != nil {
			return nil, fmt.Errorf("recipient %q is not a valid address: %w", a, err)
		}
		for _, m := range list {
			out = append(out, core.Address{Name: m.Name, Email: m.Address})
		}
	}
	return out, nil
}

// sendmailError is a failure with its exit status.
type sendmailError struct {
	code int
	err  error
}

func (e *sendmailError) Error() string { return e.err.Error() }

func usageErr(err error) error { return &sendmailError{exitUsage, err} }
func dataErr(err error) error  { return &sendmailError{exitDataErr, err} }
func tempErr(err error) error  { return &sendmailError{exitTempFail, err} }

// buildSendmailMessage reads and parses the message and applies the
// options: recipients, -f and -F.
func buildSendmailMessage(o sendmailOptions, stdin io.Reader) (*core.Message, error) {
	args, err := sendmailRecipients(o.recipients)
	if err != nil {
		return nil, usageErr(err)
	}
	if o.sender != "" && !core.ValidEmail(o.sender) {
		return nil, usageErr(fmt.Errorf("sender %q given with -f is not a valid address", o.sender))
	}
	if !o.fromHeaders && len(args) == 0 {
		return nil, usageErr(errors.New("no recipients: give them as arguments or use -t to read them from the headers"))
	}
	raw, err := readSendmailInput(stdin, o.ignoreDots, sendmailMaxBytes)
	if err != nil {
		return nil, dataErr(err)
	}
	msg, err := mailparse.Parse(bytes.NewReader(raw))
	if err != nil {
		return nil, dataErr(fmt.Errorf("the message cannot be read: %s", describe(err)))
	}
	rcpts := args
	if o.fromHeaders {
		rcpts = append(msg.Recipients(), args...)
		if len(rcpts) == 0 {
			return nil, dataErr(errors.New("no recipient addresses found in the To, Cc or Bcc headers"))
		}
	}
	mailparse.AddTrace(msg, sendmailTrace(rcpts))
	mailparse.ApplyEnvelope(msg, rcpts)
	if msg.From.Email == "" {
		msg.From = core.Address{Name: o.fullName, Email: o.sender}
	}
	return msg, nil
}

// sendmailTrace returns the Received field's facts of a local
// submission: this host, the user id, "with local", and the one
// recipient, if one.
func sendmailTrace(rcpts []core.Address) mailparse.Trace {
	host, err := os.Hostname()
	if err != nil {
		host = "localhost"
	}
	t := mailparse.Trace{
		By: host, Comment: fmt.Sprintf("mailsvc sendmail, from userid %d", os.Getuid()),
		With: "local", ID: mailparse.NewTraceID(), Date: time.Now(),
	}
	if len(rcpts) == 1 {
		t.For = rcpts[0].Email
	}
	return t
}

// describe renders a domain error with its field messages.
func describe(err error) string {
	msg := core.ErrorMessage(err)
	fields := core.ErrorFields(err)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		msg += " " + k + ": " + fields[k]
	}
	return msg
}

// queueSendmailMessage opens the database and queues msg with source
// "sendmail", returning its log id.
func queueSendmailMessage(ctx context.Context, msg *core.Message) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, sendmailTimeout)
	defer cancel()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rt, err := boot(ctx, log)
	if err != nil {
		return 0, tempErr(err)
	}
	defer rt.db.Close()
	svc := delivery.New(delivery.Options{Logs: rt.db.Logs(), Settings: &app.Settings{Store: rt.db.Settings(), Connections: rt.db.Connections()}, Logger: log})
	id, err := svc.Enqueue(ctx, &core.Log{Message: *msg, Source: "sendmail"})
	if core.ErrorCode(err) == core.EINVALID {
		return 0, dataErr(fmt.Errorf("the message cannot be queued: %s", describe(err)))
	} else if err != nil {
		return 0, tempErr(err)
	}
	return id, nil
}

// runSendmail is the whole command; it returns the exit status.
func runSendmail(ctx context.Context, args []string, stdin io.Reader, stderr io.Writer) int {
	o, err := parseSendmailArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "mailsvc sendmail: %v\n\n%s", err, sendmailUsage)
		return exitUsage
	}
	if o.help {
		fmt.Fprint(stderr, sendmailUsage)
		return 0
	}
	msg, err := buildSendmailMessage(o, stdin)
	if err == nil {
		_, err = queueSendmailMessage(ctx, msg)
	}
	if err != nil {
		code := exitTempFail
		var se *sendmailError
		if errors.As(err, &se) {
			code = se.code
		}
		fmt.Fprintf(stderr, "mailsvc sendmail: %v\n", err)
		return code
	}
	return 0
}

// sendmailCommand is `mailsvc sendmail`: sendmail's command line, so its
// flags are parsed by hand rather than by cobra.
func sendmailCommand() *cobra.Command {
	return &cobra.Command{
		Use:                "sendmail [-t] [-i] [-f sender] [-F name] [recipient ...]",
		Short:              "Queue a message read from standard input (sendmail-compatible, for PHP's sendmail_path, cron and scripts)",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if code := runSendmail(cmd.Context(), args, cmd.InOrStdin(), cmd.ErrOrStderr()); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	}
}
