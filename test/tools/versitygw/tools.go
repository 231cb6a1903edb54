//go:build tools

// Package versitygw pins Versity Gateway (Apache-2.0), an S3 server over a plain directory, that the audit bucket
// tests read from (test/tools/build.sh).
package versitygw

import _ "github.com/versity/versitygw/cmd/versitygw"
