package auth

import (
	"errors"
	"os/exec"
	"runtime"
)

// DefaultOpenBrowser starts the desktop's URL opener (xdg-open, or open on
// macOS, rundll32 on Windows) without waiting for it. Without one it returns an error and the
// caller relies on the printed address.
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
		if err := cmd.Start(); err != nil {
			continue
		}
		go func() { _ = cmd.Wait() }()
		return nil
	}
	return errors.New("no browser opener found (xdg-open or open)")
}
