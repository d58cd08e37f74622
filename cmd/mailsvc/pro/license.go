package pro

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	apppro "github.com/mailsvc/mailsvc/app/pro"
)

// licenseCommand is `mailsvc license`: the vendor's tools.
func licenseCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "license",
		Short: "Mint Pro licence keys (vendor tools): keygen, issue",
	}
	cmd.AddCommand(keygenCommand(), issueCommand())
	return cmd
}

func keygenCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "keygen",
		Short: "Print a new vendor key pair: public_key and private_key, base64",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			pub, priv, err := ed25519.GenerateKey(nil)
			if err != nil {
				return fmt.Errorf("generate key pair: %w", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "public_key: %s\n", base64.StdEncoding.EncodeToString(pub))
			fmt.Fprintf(out, "private_key: %s\n", base64.StdEncoding.EncodeToString(priv))
			return nil
		},
	}
}

func issueCommand() *cobra.Command {
	var keyFile, site, expires, id string
	var features []string
	cmd := &cobra.Command{
		Use:   "issue --private-key FILE --site URL --features a,b --expires YYYY-MM-DD",
		Short: "Sign a licence key for a site; the key is printed alone on the last line",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keyFile == "" || site == "" || expires == "" {
				return errors.New("--private-key, --site and --expires are required")
			}
			text, err := os.ReadFile(keyFile)
			if err != nil {
				return fmt.Errorf("read the private key: %w", err)
			}
			priv, err := apppro.ParsePrivateKey(string(text))
			if err != nil {
				return fmt.Errorf("private key %s: %w", keyFile, err)
			}
			exp, err := endOfDay(expires)
			if err != nil {
				return err
			}
			var names []string
			for _, f := range features {
				if f != "" {
					names = append(names, f)
				}
			}
			key, err := apppro.IssueLicense(priv, apppro.License{ID: id, Site: site, Features: names, ExpiresAt: exp})
			if err != nil {
				return err
			}
			l, err := apppro.VerifyLicenseKey(key, []ed25519.PublicKey{priv.Public().(ed25519.PublicKey)})
			if err != nil {
				return fmt.Errorf("check the issued key: %w", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "license_id: %s\nsite: %s\nfeatures: %v\nexpires_at: %s\n", l.ID, l.Site, l.Features, l.ExpiresAt.Format("2006-01-02T15:04:05Z"))
			fmt.Fprintln(out, key)
			return nil
		},
	}
	cmd.Flags().StringVar(&keyFile, "private-key", "", "file holding the vendor's base64 private key")
	cmd.Flags().StringVar(&site, "site", "", "the site URL the licence is for")
	cmd.Flags().StringSliceVar(&features, "features", nil, "licensed features, comma-separated (with or without the feature: prefix)")
	cmd.Flags().StringVar(&expires, "expires", "", "last day the licence is valid, YYYY-MM-DD (UTC)")
	cmd.Flags().StringVar(&id, "id", "", "licence id (default: a random lic_...)")
	return cmd
}
