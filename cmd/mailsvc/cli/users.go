package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/mailsvc/mailsvc/adapters/wordpress"
)

func usersCommand() *cobra.Command {
	users := &cobra.Command{Use: "users", Short: "Manage the standalone, WordPress-shaped user tables"}
	var role, email string
	add := &cobra.Command{
		Use:   "add LOGIN",
		Short: "Create a user and an application password (printed alone on the last line)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rt, err := boot(ctx, newLogger())
			if err != nil {
				return err
			}
			defer rt.db.Close()
			if !rt.standalone() {
				return fmt.Errorf("users are managed by WordPress when MAILSVC_WP_CONFIG is set: create them in WordPress")
			}
			if err := wordpress.EnsureSchema(ctx, rt.db.Gorm(), rt.prefix); err != nil {
				return fmt.Errorf("create user tables: %w", err)
			}
			login := args[0]
			if email == "" {
				email = login + "@localhost.localdomain"
			}
			id, err := wordpress.CreateUser(ctx, rt.db.Gorm(), rt.prefix, login, email, role)
			if err != nil {
				return fmt.Errorf("create user %s: %w", login, err)
			}
			pw, err := wordpress.CreateApplicationPassword(ctx, rt.db.Gorm(), rt.prefix, id, "mailsvc users add")
			if err != nil {
				return fmt.Errorf("create application password: %w", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "Created user %s (id %d, role %s). Application password:\n", login, id, role)
			fmt.Fprintln(out, pw)
			return nil
		},
	}
	add.Flags().StringVar(&role, "role", "", "WordPress role: administrator, editor, author, contributor, subscriber (required)")
	add.Flags().StringVar(&email, "email", "", "email address (default LOGIN@localhost.localdomain)")
	_ = add.MarkFlagRequired("role")
	users.AddCommand(add)
	return users
}
