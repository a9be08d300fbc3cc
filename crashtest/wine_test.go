package crashtest

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

var crashWine = flag.Int("crash.wine", 6, "crash campaign under Wine (MIGRATE_WINE=1): kills to land in the Windows build, in rounds of three in apply and its resumes and one in undo")

// windowsBinary is the Windows build of migrate that TestCrashWine runs
// under Wine.
var windowsBinary string

// TestCrashWine is TestCrash with the Windows build of migrate, run under
// Wine (MIGRATE_WINE=1, `wine` on PATH and WINEPREFIX holding the stand-in
// bcryptprimitives.dll that .ci/wine/run builds): killed with SIGKILL on
// its Wine process, which ends the Windows process where it is, as
// TerminateProcess does (Wine releases its handles and its lock on the
// journal), resumed, and compared exactly, undo included. Its paths are Windows paths with a drive letter
// (Z:\...), as a consultant's laptop has them.
func TestCrashWine(t *testing.T) {
	if os.Getenv("MIGRATE_WINE") != "1" {
		t.Skip("MIGRATE_WINE=1 runs the Windows build under Wine")
	}
	if runtime.GOOS != "linux" {
		t.Skip("Wine runs on Linux")
	}
	if _, err := exec.LookPath("wine"); err != nil {
		t.Fatalf("MIGRATE_WINE=1 but %v", err)
	}
	windowsBinary = filepath.Join(t.TempDir(), "migrate.exe")
	build := exec.Command("go", "build", "-o", windowsBinary, "github.com/migrate-tool/migrate/cmd/migrate")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building migrate for Windows: %v\n%s", err, out)
	}
	// One wineserver for the whole campaign (it stays 10 s after its last
	// program), started here with its helper programs (services.exe and
	// the like) by a first run whose output goes nowhere: started by a
	// run of the campaign, they would hold its output pipes open past its
	// end, and every run would seem to last seconds.
	if err := exec.Command("wineserver", "-p10").Run(); err != nil {
		t.Logf("wineserver -p10: %v (one is running already)", err)
	}
	if err := exec.Command("wine", windowsBinary, "version").Run(); err != nil {
		t.Fatalf("wine migrate.exe version: %v", err)
	}
	// Rounds of four kills: three in apply and its resumes, one in undo.
	runCrash(t, crashKind{name: "Windows build under Wine", points: *crashWine, perRound: 4,
		records: *crashKindSize, windows: true})
}

// wineCommand runs the Windows build under Wine with args, a Unix path
// among them written as Windows sees it: on drive Z:, which Wine maps to
// the root. The wine loader execs the program in its own process, so
// killing it is killing the Windows process.
func wineCommand(args []string) *exec.Cmd {
	win := make([]string, 0, len(args)+1)
	win = append(win, windowsBinary)
	for _, a := range args {
		if strings.HasPrefix(a, "/") {
			a = `Z:` + strings.ReplaceAll(a, "/", `\`)
		}
		win = append(win, a)
	}
	return exec.Command("wine", win...)
}
