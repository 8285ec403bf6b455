package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/term"
)

func init() {
	register(command{name: "login", summary: "verify an API key and keep it, with its server, as a named profile", run: runLogin})
	describe("login", usage{
		synopsis: "[--profile NAME] [--url URL]",
		about: "Reads a secret key (PAYD_API_KEY, else typed at a prompt that does not echo it, else one line of\n" +
			"standard input), checks it with GET /v1/account, and keeps it with the server's URL as profile NAME\n" +
			"(default \"default\") in the config file: PAYD_CONFIG, else payd/config.json in the user config\n" +
			"directory, readable by you only. The first profile becomes the default. Client commands (trigger,\n" +
			"listen, logs tail, terminal simulate) then need no PAYD_API_KEY: they use PAYD_PROFILE's profile, else\n" +
			"the default one; PAYD_API_KEY and PAYD_URL, when set, still win.",
		vars: clientVars,
	})
	register(command{name: "logout", summary: "forget a profile's key", run: runLogout})
	describe("logout", usage{
		synopsis: "[--profile NAME] [--all]",
		about:    "Removes profile NAME (default: PAYD_PROFILE, else the default profile), or every profile with --all,\nfrom the config file.",
		vars:     []string{"PAYD_CONFIG", "PAYD_PROFILE"},
	})
	register(command{name: "profiles", summary: "list the profiles payd login kept, or choose the default", run: runProfiles})
	describe("profiles", usage{
		synopsis: "[--use NAME]",
		about:    "Lists the profiles (name, merchant, mode, server; the default marked *), or makes NAME the default.\nKeys are never printed.",
		vars:     []string{"PAYD_CONFIG", "PAYD_PROFILE"},
	})
}

// config is the client's file: the profiles `payd login` kept and the
// signing secrets `payd listen` keeps per merchant and mode.
type config struct {
	Default  string             `json:"default_profile,omitempty"`
	Profiles map[string]profile `json:"profiles,omitempty"`
	// ListenSecrets maps "<merchant id>/<test|live>" to payd listen's
	// signing secret on this device.
	ListenSecrets map[string]string `json:"listen_secrets,omitempty"`
}

// profile is one kept login.
type profile struct {
	URL          string `json:"url"`
	APIKey       string `json:"api_key"`
	MerchantID   string `json:"merchant_id"`
	MerchantName string `json:"merchant_name"`
	Livemode     bool   `json:"livemode"`
	KeyID        string `json:"key_id"`
}

var profileName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// configPath is PAYD_CONFIG, else payd/config.json in the user config
// directory.
func configPath(e *env) (string, error) {
	if p := e.getenv("PAYD_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory (%v): set PAYD_CONFIG to a file path", err)
	}
	return filepath.Join(dir, "payd", "config.json"), nil
}

// loadConfig reads the config file; a missing file is an empty config. A
// file others can read is refused: it holds API keys.
func loadConfig(path string) (*config, error) {
	c := &config{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s holds API keys but others may read it (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	if err := json.NewDecoder(io.LimitReader(f, 1<<20)).Decode(c); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return c, nil
}

// openConfig finds and reads the config file.
func openConfig(e *env) (string, *config, error) {
	path, err := configPath(e)
	if err != nil {
		return "", nil, err
	}
	cfg, err := loadConfig(path)
	return path, cfg, err
}

// save writes the config atomically, readable by its owner only.
func (c *config) save(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// activeProfile is the profile client commands use: PAYD_PROFILE's, else
// the default. ok is false when there is none.
func activeProfile(e *env) (name string, p profile, ok bool, err error) {
	path, err := configPath(e)
	if err != nil {
		return "", p, false, nil
	}
	c, err := loadConfig(path)
	if err != nil {
		return "", p, false, err
	}
	name = e.getenv("PAYD_PROFILE")
	if name == "" {
		name = c.Default
	}
	p, ok = c.Profiles[name]
	if !ok && e.getenv("PAYD_PROFILE") != "" {
		return "", p, false, fmt.Errorf("PAYD_PROFILE=%s: no such profile in %s (payd profiles lists them)", name, path)
	}
	return name, p, ok, nil
}

// readKey reads the key to log in with: PAYD_API_KEY, else a prompt that
// does not echo on a terminal, else one line of standard input.
func readKey(e *env) (string, error) {
	if k := e.getenv("PAYD_API_KEY"); k != "" {
		return k, nil
	}
	in := e.stdin
	if in == nil {
		in = os.Stdin
	}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(e.stderr, "Secret key (sk_test_... or sk_live_..., not shown): ")
		raw, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		return strings.TrimSpace(string(raw)), err
	}
	line, err := bufio.NewReader(io.LimitReader(in, 4096)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	return strings.TrimSpace(line), nil
}

func runLogin(ctx context.Context, e *env, args []string) error {
	fs := newFlags("login")
	name := fs.String("profile", "default", "the profile's name (letters, digits, . _ -)")
	base := fs.String("url", "", "the payd server (default PAYD_URL, else http:// + PAYD_ADDR)")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badUsage(e, fs, "login takes no arguments: the key is read from PAYD_API_KEY or standard input")
	}
	if !profileName.MatchString(*name) {
		return badUsage(e, fs, "--profile is 1 to 64 letters, digits, '.', '_' or '-'")
	}
	key, err := readKey(e)
	if err != nil {
		return err
	}
	if key == "" {
		return errors.New("no key given: set PAYD_API_KEY or type it at the prompt")
	}
	if !strings.HasPrefix(key, "sk_") {
		return errors.New("payd login keeps secret keys only (sk_test_... or sk_live_...)")
	}
	url := strings.TrimRight(*base, "/")
	if url == "" {
		url = serverURL(e)
	}
	c := &apiClient{base: url, key: key, http: defaultHTTP()}
	raw, err := c.do(ctx, "GET", "/v1/account", nil)
	if err != nil {
		return fmt.Errorf("the key was not accepted: %w", err)
	}
	var acct struct {
		ID       string `json:"id"`
		Name     string `json:"name"`
		Livemode bool   `json:"livemode"`
		KeyID    string `json:"key_id"`
	}
	if err := json.Unmarshal(raw, &acct); err != nil || acct.ID == "" {
		return fmt.Errorf("GET /v1/account: an answer that is not an account: %.200s", raw)
	}
	path, cfg, err := openConfig(e)
	if err != nil {
		return err
	}
	if cfg.Profiles == nil {
		cfg.Profiles = map[string]profile{}
	}
	cfg.Profiles[*name] = profile{URL: url, APIKey: key, MerchantID: acct.ID, MerchantName: acct.Name, Livemode: acct.Livemode, KeyID: acct.KeyID}
	if cfg.Default == "" {
		cfg.Default = *name
	}
	if err := cfg.save(path); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "logged in to %s (%s) in %s mode at %s with key %s as profile %q%s; kept in %s\n",
		acct.Name, acct.ID, modeName(acct.Livemode), url, acct.KeyID, *name, defaultMark(cfg, *name), path)
	return nil
}

func runLogout(ctx context.Context, e *env, args []string) error {
	fs := newFlags("logout")
	name := fs.String("profile", "", "the profile to forget (default PAYD_PROFILE, else the default profile)")
	all := fs.Bool("all", false, "forget every profile")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	path, cfg, err := openConfig(e)
	if err != nil {
		return err
	}
	if *all {
		n := len(cfg.Profiles)
		cfg.Profiles, cfg.Default = nil, ""
		fmt.Fprintf(e.stdout, "forgot %d profiles\n", n)
		return cfg.save(path)
	}
	target := *name
	if target == "" {
		target = e.getenv("PAYD_PROFILE")
	}
	if target == "" {
		target = cfg.Default
	}
	if _, ok := cfg.Profiles[target]; !ok {
		return fmt.Errorf("no profile %q in %s", target, path)
	}
	delete(cfg.Profiles, target)
	if cfg.Default == target {
		cfg.Default = ""
	}
	fmt.Fprintf(e.stdout, "forgot profile %q\n", target)
	return cfg.save(path)
}

func runProfiles(ctx context.Context, e *env, args []string) error {
	fs := newFlags("profiles")
	use := fs.String("use", "", "make this profile the default")
	if err := parseFlags(e, fs, args); err != nil {
		return err
	}
	path, cfg, err := openConfig(e)
	if err != nil {
		return err
	}
	if *use != "" {
		if _, ok := cfg.Profiles[*use]; !ok {
			return fmt.Errorf("no profile %q in %s", *use, path)
		}
		cfg.Default = *use
		fmt.Fprintf(e.stdout, "default profile: %s\n", *use)
		return cfg.save(path)
	}
	if len(cfg.Profiles) == 0 {
		fmt.Fprintln(e.stdout, "no profiles: payd login makes one")
		return nil
	}
	names := make([]string, 0, len(cfg.Profiles))
	for n := range cfg.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := cfg.Profiles[n]
		mark := " "
		if n == cfg.Default {
			mark = "*"
		}
		fmt.Fprintf(e.stdout, "%s %-16s %s (%s) %s mode, %s\n", mark, n, p.MerchantName, p.MerchantID, modeName(p.Livemode), p.URL)
	}
	return nil
}

func modeName(live bool) string {
	if live {
		return "live"
	}
	return "test"
}

func defaultMark(c *config, name string) string {
	if c.Default == name {
		return " (the default)"
	}
	return ""
}
