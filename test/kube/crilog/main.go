// crilog writes a log as containerd writes a container's output to its log file, with containerd's own
// CRI logger: each line as `<time> <stream> <P|F> <content>`, lines longer than MAXLEN cut into P parts.
//
//	crilog MAXLEN STDOUT_FILE [STDERR_FILE] > container.log
//
// With STDERR_FILE, its lines go to stderr, one in the middle of each stdout line longer than 4×MAXLEN
// (and the rest after), as a container's two streams interleave in one log file.
//
//	crilog read container.log > timestamped.log
//
// reads such a file back as `kubectl logs --timestamps` shows it, with the kubelet's own log reader:
// each line whole, both streams, after its time.
//
//	crilog docker MAXLEN STDOUT_FILE [STDERR_FILE] > container.log
//
// writes the log as Docker's json-file driver does (what /var/log/pods holds on a node whose runtime
// is Docker, through cri-dockerd), with Docker's own log copier and json-file logger: each line a JSON
// object `{"log": …, "stream": …, "time": …}`, lines longer than MAXLEN (16 KiB by default) in several,
// all but the last without their line end.
package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	criio "github.com/containerd/containerd/pkg/cri/io"
	"github.com/docker/docker/daemon/logger"
	"github.com/docker/docker/daemon/logger/jsonfilelog"
	"k8s.io/cri-client/pkg/logs"
)

// sizedLogger gives Docker's copier a message size, as logging drivers with their own limit do.
type sizedLogger struct {
	logger.Logger
	size int
}

func (s sizedLogger) BufSize() int { return s.size }

// writeDocker copies the files into one json-file log, as the Docker daemon copies a container's streams.
func writeDocker(maxLen int, stdoutPath string, stderrPath string) {
	dir, err := os.MkdirTemp("", "crilog-docker-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	path := dir + "/container.log"
	json, err := jsonfilelog.New(logger.Info{LogPath: path, ContainerID: "crilog", Config: map[string]string{}})
	if err != nil {
		fail(err)
	}
	sources := map[string]io.Reader{}
	for stream, file := range map[string]string{"stdout": stdoutPath, "stderr": stderrPath} {
		if file == "" {
			continue
		}
		f, err := os.Open(file)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		sources[stream] = f
	}
	copier := logger.NewCopier(sources, sizedLogger{json, maxLen})
	copier.Run()
	copier.Wait()
	json.Close()
	out, err := os.ReadFile(path)
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(out)
}

// lockedWriter keeps the two streams' lines whole in the one file, as containerd's log file does.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func lines(path string) [][]byte {
	f, err := os.Open(path)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	var out [][]byte
	r := bufio.NewReaderSize(f, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			out = append(out, line)
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			fail(err)
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "crilog:", err)
	os.Exit(1)
}

func main() {
	if len(os.Args) == 3 && os.Args[1] == "read" {
		// Not following, the reader never asks the runtime about the container.
		if err := logs.ReadLogs(context.Background(), os.Args[2], "", &logs.LogOptions{Timestamp: true}, nil, os.Stdout, os.Stdout); err != nil {
			fail(err)
		}
		return
	}
	if len(os.Args) >= 4 && os.Args[1] == "docker" {
		maxLen, err := strconv.Atoi(os.Args[2])
		if err != nil {
			fail(err)
		}
		stderrPath := ""
		if len(os.Args) > 4 {
			stderrPath = os.Args[4]
		}
		writeDocker(maxLen, os.Args[3], stderrPath)
		return
	}
	if len(os.Args) < 3 {
		fail(fmt.Errorf("usage: crilog MAXLEN STDOUT_FILE [STDERR_FILE]"))
	}
	maxLen, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fail(err)
	}
	out := &lockedWriter{w: os.Stdout}
	stdout, stdoutDone := criio.NewCRILogger("stdout", out, criio.Stdout, maxLen)
	stderr, stderrDone := criio.NewCRILogger("stderr", out, criio.Stderr, maxLen)
	var errLines [][]byte
	if len(os.Args) > 3 {
		errLines = lines(os.Args[3])
	}
	// The loggers read in goroutines of their own: a pause lets each write what it was given.
	settle := func() { time.Sleep(20 * time.Millisecond) }
	for _, line := range lines(os.Args[2]) {
		// containerd writes a part once it has read more than MAXLEN past it, so half of the line is at least 2×MAXLEN.
		if len(errLines) > 0 && len(line) > 4*maxLen {
			stdout.Write(line[:len(line)/2])
			settle()
			stderr.Write(errLines[0])
			errLines = errLines[1:]
			settle()
			stdout.Write(line[len(line)/2:])
			continue
		}
		stdout.Write(line)
	}
	settle()
	for _, line := range errLines {
		stderr.Write(line)
	}
	stdout.Close()
	stderr.Close()
	<-stdoutDone
	<-stderrDone
}
