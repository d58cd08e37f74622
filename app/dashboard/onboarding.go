package dashboard

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailsvc/mailsvc/app"
	"github.com/mailsvc/mailsvc/core"
)

// ScopeOnboarding is the settings scope that keeps the wizard's state.
const ScopeOnboarding = "onboarding"

// MaxOnboardingStep is the highest wizard step; steps run 0 to it.
const MaxOnboardingStep = 10

// OnboardingState is the onboarding wizard's state. Step is the screen
// the admin reached (0–10, the screens are the admin UI's choice);
// Driver the transport chosen ("" none yet); Dismissed hides the wizard;
// Completed is set once a connection was applied and its test email
// accepted; ConnectionID is the connection the wizard applied, nil before.
type OnboardingState struct {
	Step         int64  `json:"step"`
	Driver       string `json:"driver"`
	Dismissed    bool   `json:"dismissed"`
	Completed    bool   `json:"completed"`
	ConnectionID *int64 `json:"connection_id"`
}

// OnboardingInput is a partial update of the wizard's state; nil fields
// are left as they are.
type OnboardingInput struct {
	Step      *int64
	Driver    *string
	Dismissed *bool
	Completed *bool
}

// Onboarding returns the wizard's state (all zero before the first
// update).
func (s *Service) Onboarding(ctx context.Context) (*OnboardingState, error) {
	stored, err := s.Store.LoadSettings(ctx, ScopeOnboarding)
	if err != nil {
		return nil, fmt.Errorf("load onboarding state: %w", err)
	}
	st := &OnboardingState{}
	vals := core.Settings(stored)
	st.Step = vals.Int("step", 0)
	st.Driver = vals.String("driver")
	st.Dismissed = vals.Bool("dismissed", false)
	st.Completed = vals.Bool("completed", false)
	if id, ok := core.AsInt(stored["connection_id"]); ok && id > 0 {
		st.ConnectionID = &id
	}
	return st, nil
}

// UpdateOnboarding merges in into the wizard's state and returns it. A
// step outside 0–10 or a driver that is not registered is a validation
// error, and nothing is stored.
func (s *Service) UpdateOnboarding(ctx context.Context, in OnboardingInput) (*OnboardingState, error) {
	fields := map[string]string{}
	values := map[string]any{}
	if in.Step != nil {
		if *in.Step < 0 || *in.Step > MaxOnboardingStep {
			fields["step"] = fmt.Sprintf("Must be a whole number between 0 and %d.", MaxOnboardingStep)
		}
		values["step"] = *in.Step
	}
	if in.Driver != nil {
		d := strings.TrimSpace(*in.Driver)
		if _, ok := core.LookupDriver(d); d != "" && !ok {
			fields["driver"] = fmt.Sprintf("Unknown driver %q.", d)
		}
		values["driver"] = d
	}
	if in.Dismissed != nil {
		values["dismissed"] = *in.Dismissed
	}
	if in.Completed != nil {
		values["completed"] = *in.Completed
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	if len(values) > 0 {
		if err := s.Store.SaveSettings(ctx, ScopeOnboarding, values); err != nil {
			return nil, fmt.Errorf("save onboarding state: %w", err)
		}
	}
	return s.Onboarding(ctx)
}

// ApplyInput is POST /dashboard/onboarding/apply: the connection the
// wizard built. ConnectionID, when set, updates that connection instead
// of creating one. TestEmail is the test email's recipient; empty means
// the site's admin address, else the from_email setting, else the
// connection's from_email.
type ApplyInput struct {
	Name         *string
	Driver       *string
	Settings     map[string]any
	ConnectionID *int64
	TestEmail    *string
}

// TestOutcome is the result of the wizard's test email.
type TestOutcome struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	LogID   int64  `json:"log_id"`
	To      string `json:"to"`
}

// ApplyResult is the answer of POST /dashboard/onboarding/apply.
type ApplyResult struct {
	// Connection is the created or updated connection, masked.
	Connection *core.Connection `json:"connection"`
	Test       TestOutcome      `json:"test"`
	Onboarding *OnboardingState `json:"onboarding"`
}

// ApplyOnboarding creates (or, with ConnectionID, updates) the wizard's
// connection with the driver's validation exactly as the connection
// routes apply it, sends a test email through it, makes it the default
// connection and records the result in the wizard's state: Completed once
// the provider accepted the test email. Without ConnectionID, a retry
// after a refused test updates the connection the earlier apply made
// instead of adding another. It is all or nothing: an error (a validation
// error, or a test email that could not be tried) leaves no new
// connection and the settings as they were.
func (s *Service) ApplyOnboarding(ctx context.Context, in ApplyInput) (*ApplyResult, error) {
	fields := map[string]string{}
	var existing *core.Connection
	if in.ConnectionID != nil {
		if *in.ConnectionID < 1 {
			fields["connection_id"] = "Must be the id of a connection."
		} else {
			c, err := s.Editor.Get(ctx, *in.ConnectionID)
			if err == nil {
				c, err = s.networkConnection(ctx, c)
			}
			switch {
			case core.ErrorCode(err) == core.ENOTFOUND:
				fields["connection_id"] = core.NoSuchConnection(*in.ConnectionID)
			case err != nil:
				return nil, fmt.Errorf("onboarding connection: %w", err)
			}
			existing = c
		}
	}
	var driver *core.Driver
	switch {
	case in.Driver != nil && strings.TrimSpace(*in.Driver) != "":
		d, ok := core.LookupDriver(strings.TrimSpace(*in.Driver))
		if !ok {
			fields["driver"] = fmt.Sprintf("Unknown driver %q.", strings.TrimSpace(*in.Driver))
		}
		driver = d
	case in.ConnectionID == nil:
		fields["driver"] = "This field is required."
	}
	to := ""
	if in.TestEmail != nil {
		to = strings.TrimSpace(*in.TestEmail)
		if to != "" && !core.ValidEmail(to) {
			fields["test_email"] = "Must be a valid email address."
		}
	}
	if err := core.Invalid(fields); err != nil {
		return nil, err
	}
	if existing == nil && in.ConnectionID == nil {
		// A retry after a refused test updates the connection the wizard
		// made instead of adding another.
		c, err := s.wizardConnection(ctx)
		if err != nil {
			return nil, err
		}
		existing = c
	}
	if to == "" {
		var err error
		if to, err = s.defaultRecipient(ctx, in, existing); err != nil {
			return nil, err
		}
	}
	if to == "" {
		return nil, core.InvalidField("test_email", "No recipient for the test email: give test_email, or set the site's admin email or a from email.")
	}

	conn, err := s.applyConnection(ctx, in, driver, existing)
	if err != nil {
		return nil, err
	}
	res, err := s.Tester.TestConnection(ctx, conn.ID, to)
	if err == nil {
		_, err = s.Settings.Update(ctx, map[string]any{"default_connection_id": conn.ID})
		if err != nil {
			err = fmt.Errorf("make connection %d the default: %w", conn.ID, err)
		}
	}
	if err != nil {
		// All or nothing: a test that could not even be tried (e.g. no
		// sender) leaves no new connection behind.
		if existing == nil {
			if undo := s.Editor.Delete(ctx, conn.ID); undo != nil {
				return nil, fmt.Errorf("%w (and deleting connection %d again: %v)", err, conn.ID, undo)
			}
		}
		return nil, err
	}
	values := map[string]any{"driver": conn.Driver, "connection_id": conn.ID, "completed": res.Success}
	if err := s.Store.SaveSettings(ctx, ScopeOnboarding, values); err != nil {
		return nil, fmt.Errorf("save onboarding state: %w", err)
	}
	state, err := s.Onboarding(ctx)
	if err != nil {
		return nil, err
	}
	return &ApplyResult{
		Connection: conn,
		Test:       TestOutcome{Success: res.Success, Message: res.Message, LogID: res.LogID, To: res.To},
		Onboarding: state,
	}, nil
}

// wizardConnection returns the connection an earlier apply made whose
// test was not accepted (the state's connection while not completed), or
// nil when there is none or it was deleted since.
func (s *Service) wizardConnection(ctx context.Context) (*core.Connection, error) {
	st, err := s.Onboarding(ctx)
	if err != nil {
		return nil, err
	}
	if st.Completed || st.ConnectionID == nil {
		return nil, nil
	}
	c, err := s.Editor.Get(ctx, *st.ConnectionID)
	if err == nil {
		c, err = s.networkConnection(ctx, c)
	}
	switch {
	case core.ErrorCode(err) == core.ENOTFOUND:
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("onboarding connection: %w", err)
	}
	return c, nil
}

// networkConnection returns c when the network may use it (Use), else an
// ENOTFOUND error, as for a connection that does not exist: the wizard
// makes its connection the network's default.
func (s *Service) networkConnection(ctx context.Context, c *core.Connection) (*core.Connection, error) {
	usable, err := core.CanUseConnection(ctx, s.Use, 0, c.ID)
	if err != nil {
		return nil, err
	}
	if !usable {
		return nil, core.Errorf(core.ENOTFOUND, "%s", core.NoSuchConnection(c.ID))
	}
	return c, nil
}

// applyConnection creates the wizard's connection (or updates existing),
// active.
func (s *Service) applyConnection(ctx context.Context, in ApplyInput, driver *core.Driver, existing *core.Connection) (*core.Connection, error) {
	active := true
	input := app.ConnectionInput{Name: in.Name, IsActive: &active, Settings: in.Settings}
	if driver != nil {
		input.Driver = &driver.Slug
	}
	if input.Name == nil || strings.TrimSpace(*input.Name) == "" {
		input.Name = nil
		if existing == nil || driver != nil && driver.Slug != existing.Driver {
			name := driver.Name
			if name == "" {
				name = driver.Slug
			}
			input.Name = &name
		}
	}
	if existing != nil {
		return s.Editor.Update(ctx, existing.ID, input)
	}
	return s.Editor.Create(ctx, input)
}

// defaultRecipient returns the test email's recipient when none is given:
// the site's admin address, else the from_email setting, else the
// connection's from_email (given now or stored), else "".
func (s *Service) defaultRecipient(ctx context.Context, in ApplyInput, existing *core.Connection) (string, error) {
	if s.Site != nil {
		admin, err := s.Site.AdminEmail(ctx)
		if err != nil {
			return "", fmt.Errorf("site admin email: %w", err)
		}
		if core.ValidEmail(admin) {
			return admin, nil
		}
	}
	st, err := s.Settings.Get(ctx)
	if err != nil {
		return "", fmt.Errorf("read settings: %w", err)
	}
	if from := core.DecodeGeneralSettings(st).FromEmail; core.ValidEmail(from) {
		return from, nil
	}
	if from := core.Settings(in.Settings).String("from_email"); core.ValidEmail(from) {
		return from, nil
	}
	if existing != nil {
		if from := existing.Settings.String("from_email"); core.ValidEmail(from) {
			return from, nil
		}
	}
	return "", nil
}
