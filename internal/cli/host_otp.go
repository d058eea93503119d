package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pkuinfo/harness/host"
	"github.com/pkuinfo/harness/host/abilities"
	"github.com/pkuinfo/harness/host/api"
	"github.com/pkuinfo/harness/host/store"
	"github.com/pkuinfo/harness/lang/expr"
)

// SchedulerTick is how often `harness serve` looks for due schedules.
const SchedulerTick = 30 * time.Second

// schedulerTick is SchedulerTick, shorter in tests.
var schedulerTick = SchedulerTick

// abilitySets maps each open database to the abilities built on it, so the
// serve setup finds the scheduler of the Host it is given.
var abilitySets sync.Map // *store.DB → *abilities.Set

func init() {
	Register(&Command{
		Path:    "otp set",
		Usage:   "[-] [--data DIR]",
		Summary: "store the secret of the IAAA authenticator (手机令牌) for otp.code and verify.treehole: asked without echo, or the first line of stdin (harness otp set < FILE)",
		Run:     otpSetCmd,
		Flags:   hostFlagsOnly,
	})
	Register(&Command{
		Path:    "otp code",
		Usage:   "[--data DIR]",
		Summary: "print the current 6-digit code of the stored authenticator",
		Run:     otpCodeCmd,
		Flags:   hostFlagsOnly,
	})
	Register(&Command{
		Path:    "otp clear",
		Usage:   "[--data DIR]",
		Summary: "forget the stored authenticator secret",
		Run:     otpClearCmd,
		Flags:   hostFlagsOnly,
	})
	RegisterHostSetup(func(db *store.DB) ([]host.Option, error) {
		cc, err := newCampusClient(db)
		if err != nil {
			return nil, err
		}
		set := abilities.New(db, abilities.WithCampus(cc))
		abilitySets.Store(db, set)
		return []host.Option{host.WithAbilities(set)}, nil
	})
	RegisterServeSetup(abilityServe)
}

// otpOpen parses the flags of an otp command, checks its arguments with check (nil: none
// allowed) before anything is opened, and opens the database; readOnly as hostFlags.readOnly.
// On failure it has said why on stderr and the DB is nil.
func otpOpen(env *Env, name, usage string, readOnly bool, check func(args []string) string) (*store.DB, []string, int) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var hf hostFlags
	hf.register(fs)
	hf.readOnly = readOnly
	args, err := parseInterleaved(fs, env.Args)
	if err != nil {
		return nil, nil, ExitUsage
	}
	if check == nil && len(args) > 0 {
		fmt.Fprintf(env.Stderr, "usage: %s %s\n", name, usage)
		return nil, nil, ExitUsage
	}
	if check != nil {
		if why := check(args); why != "" {
			fmt.Fprintf(env.Stderr, "%s: %s\n", name, why)
			return nil, nil, ExitUsage
		}
	}
	db, err := openStoreFlags(context.Background(), &hf)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return nil, nil, ExitFail
	}
	return db, args, ExitOK
}

// otpSetArgs refuses a secret on the command line: `ps` shows it to every user of the
// machine, and the shell's history keeps it. Only "-" (stdin) may be given.
func otpSetArgs(args []string) string {
	switch {
	case len(args) == 0 || len(args) == 1 && args[0] == "-":
		return ""
	case len(args) == 1:
		return "the secret is not taken as an argument (ps and the shell's history would show it): run harness otp set and paste it at the prompt, or harness otp set < FILE"
	}
	return "too many arguments (usage: harness otp set [-] [--data DIR])"
}

// otpSetCmd is `harness otp set [-]` (seed 004 "Host abilities": otp; docs/CAMPUS-PROTOCOLS.md §2.4).
// It asks for the secret (Base32, or an otpauth:// link) without echo when stdin is a
// terminal, and otherwise reads the first line of stdin; a secret given as an argument is
// refused (exit 2), so it stays out of `ps` and the shell's history. It prints the current
// code so the user can compare it with the authenticator app. Exit 1 when the secret is not
// usable.
func otpSetCmd(env *Env) int {
	const name = "harness otp set"
	db, _, code := otpOpen(env, name, "[-] [--data DIR]", false, otpSetArgs)
	if db == nil {
		return code
	}
	defer db.Close()
	p := newPrompter(env)
	var secret string
	if p.terminal() {
		s, err := p.secret("authenticator secret (Base32, or the otpauth:// link): ")
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
			return ExitFail
		}
		secret = strings.TrimSpace(s)
	} else {
		line, err := bufio.NewReader(io.LimitReader(env.Stdin, 4096)).ReadString('\n')
		if err != nil && line == "" {
			fmt.Fprintf(env.Stderr, "%s: no secret on stdin: run harness otp set and paste it at the prompt, or harness otp set < FILE\n", name)
			return ExitUsage
		}
		secret = strings.TrimSpace(line)
	}
	if secret == "" {
		fmt.Fprintf(env.Stderr, "%s: the secret is empty\n", name)
		return ExitUsage
	}
	now := time.Now()
	if err := abilities.SetOTPSecret(context.Background(), db, secret, now); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	s, _, _ := abilities.OTPSecret(context.Background(), db)
	c, _ := abilities.Code(s, now)
	fmt.Fprintf(env.Stdout, "authenticator secret stored; the current code is %s\n", c)
	return ExitOK
}

// otpCodeCmd is `harness otp code`: the current code on stdout; exit 1 when
// no secret is stored.
func otpCodeCmd(env *Env) int {
	const name = "harness otp code"
	db, _, code := otpOpen(env, name, "[--data DIR]", true, nil)
	if db == nil {
		return code
	}
	defer db.Close()
	s, ok, err := abilities.OTPSecret(context.Background(), db)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	if !ok {
		fmt.Fprintf(env.Stderr, "%s: no authenticator secret: run harness otp set\n", name)
		return ExitFail
	}
	c, err := abilities.Code(s, time.Now())
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	fmt.Fprintln(env.Stdout, c)
	return ExitOK
}

// otpClearCmd is `harness otp clear`.
func otpClearCmd(env *Env) int {
	const name = "harness otp clear"
	db, _, code := otpOpen(env, name, "[--data DIR]", false, nil)
	if db == nil {
		return code
	}
	defer db.Close()
	if err := abilities.ClearOTPSecret(context.Background(), db); err != nil {
		fmt.Fprintf(env.Stderr, "%s: %v\n", name, err)
		return ExitFail
	}
	fmt.Fprintln(env.Stdout, "authenticator secret forgotten")
	return ExitOK
}

// abilityServe starts the scheduler loop of `harness serve` (every
// SchedulerTick, and once at start) and adds the ability routes of
// docs/HOST-API.md ("Host abilities").
func abilityServe(ctx context.Context, h *host.Host, srv *api.Server) error {
	v, ok := abilitySets.Load(h.Store())
	if !ok {
		return fmt.Errorf("serve: the host has no abilities")
	}
	set := v.(*abilities.Set)
	go schedulerLoop(ctx, set.Scheduler(), slog.Default())
	db := h.Store()

	srv.HandleFunc("GET /v1/otp", func(w http.ResponseWriter, r *http.Request) error {
		_, ok, err := abilities.OTPSecret(r.Context(), db)
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"set": ok})
	})
	srv.HandleFunc("PUT /v1/otp", func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Secret string `json:"secret"`
		}
		if err := api.ReadJSON(r, &body); err != nil {
			return err
		}
		if err := abilities.SetOTPSecret(r.Context(), db, body.Secret, h.Now()); err != nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: err.Error()}
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"set": true})
	})
	srv.HandleFunc("DELETE /v1/otp", func(w http.ResponseWriter, r *http.Request) error {
		if err := abilities.ClearOTPSecret(r.Context(), db); err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"set": false})
	})
	srv.HandleFunc("GET /v1/todos", func(w http.ResponseWriter, r *http.Request) error {
		items, more, err := abilities.Todos(r.Context(), db, nil, 200)
		if err != nil {
			return err
		}
		out := make([]map[string]any, len(items))
		for i, t := range items {
			out[i] = map[string]any{"id": t.ID, "title": t.Title, "notes": t.Notes, "due": t.Due, "done": t.Done,
				"source": t.Plugin, "created": t.Created, "updated": t.Updated}
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"items": out, "hasMore": more})
	})
	srv.HandleFunc("GET /v1/timetable", func(w http.ResponseWriter, r *http.Request) error {
		wd := 0
		if q := r.URL.Query().Get("weekday"); q != "" {
			n, err := strconv.Atoi(q)
			if err != nil || n < 1 || n > 7 {
				return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: fmt.Sprintf("weekday %q: want 1 (Monday) to 7", q)}
			}
			wd = n
		}
		entries, err := abilities.Timetable(r.Context(), db, wd)
		if err != nil {
			return err
		}
		b, err := expr.ToJSON(entries, "")
		if err != nil {
			return err
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"entries": json.RawMessage(b)})
	})
	srv.HandleFunc("GET /v1/schedules", func(w http.ResponseWriter, r *http.Request) error {
		ss, err := set.Scheduler().List(r.Context(), r.URL.Query().Get("plugin"))
		if err != nil {
			return err
		}
		out := make([]map[string]any, len(ss))
		for i, s := range ss {
			m := map[string]any{"id": s.ID, "plugin": s.Plugin, "tool": s.Tool, "title": s.Title,
				"enabled": s.Enabled, "nextRun": nil}
			if s.NextRun != 0 {
				m["nextRun"] = s.NextRun
			}
			switch {
			case s.At != 0:
				m["at"] = s.At
			case s.Every != 0:
				m["every"] = int64(s.Every / time.Second)
			default:
				m["daily"] = s.Daily
			}
			out[i] = m
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"items": out})
	})
	srv.HandleFunc("GET /v1/schedules/{id}/runs", func(w http.ResponseWriter, r *http.Request) error {
		id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
		if err != nil {
			return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: fmt.Sprintf("schedule id %q is not a number", r.PathValue("id"))}
		}
		if _, ok, err := set.Scheduler().Get(r.Context(), id); err != nil {
			return err
		} else if !ok {
			return &api.Error{Status: http.StatusNotFound, Code: "not_found", Message: fmt.Sprintf("no schedule %d", id)}
		}
		runs, err := set.Scheduler().Runs(r.Context(), id, abilities.KeptRuns)
		if err != nil {
			return err
		}
		out := make([]map[string]any, len(runs))
		for i, run := range runs {
			res, err := expr.ToJSON(run.Result, "")
			if err != nil {
				return err
			}
			out[i] = map[string]any{"at": run.At, "ok": run.OK, "result": json.RawMessage(res), "error": run.Error,
				"durationMs": run.Duration.Milliseconds()}
		}
		return api.WriteJSON(w, http.StatusOK, map[string]any{"runs": out})
	})
	return nil
}

// schedulerLoop runs due schedules until ctx ends.
func schedulerLoop(ctx context.Context, sc *abilities.Scheduler, log *slog.Logger) {
	t := time.NewTicker(schedulerTick)
	defer t.Stop()
	for {
		runs, err := sc.RunDue(ctx)
		if err != nil && ctx.Err() == nil {
			log.Error("scheduler", "err", err)
		}
		for _, r := range runs {
			log.Info("scheduled run", "schedule", r.Schedule, "plugin", r.Plugin, "tool", r.Tool, "ok", r.OK, "error", r.Error)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
