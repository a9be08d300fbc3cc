package auth

import (
	"errors"
	"os"
	"os/exec"
	"runtime"

	"github.com/migrate-tool/migrate/odata"
)

// DefaultOpenBrowser starts the desktop's URL opener (xdg-open, or open on
// macOS, rundll32 on Windows) without waiting for it. Without one it returns an error and the
// caller relies on the printed address. The opener gets the environment
// without the tool's secret variables.
func DefaultOpenBrowser(url string) error {
	var candidates []string
	args := []string{url}
	switch runtime.GOOS {
	case "darwin":
		candidates = []string{"open"}
	case "windows":
		candidates = []string{"rundll32"}
		args = []string{"url.dll,FileProtocolHandler", url}
	default:
		candidates = []string{"xdg-open", "sensible-browser", "x-www-browser"}
	}
	for _, name := range candidates {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		cmd := exec.Command(path, args...)
		// The browser and whatever it starts need none of our credentials.
		cmd.Env = odata.WithoutSecrets(os.Environ())
		if err := cmd.Start(); err != nil {
			continue
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
	return errors.New("no browser opener found (xdg-open or open)")
}
