package harness

import (
	"fmt"
	"io"
	"os"

	"github.com/grpcbench/grpcbench/go/bench/report"
	"github.com/grpcbench/grpcbench/go/bench/schema"
)

// Emit delivers a finished results file as the flags ask: it validates it,
// writes -out and -benchfmt if set, and prints the suite's report tables
// to w (stdout under `bazel run`). pkg is the benchmark binary's import
// path, for the benchfmt header.
func (f *Flags) Emit(w io.Writer, file *schema.File, pkg string) error {
	data, err := file.Marshal()
	if err != nil {
		return err
	}
	if f.Out != "" {
		if err := os.WriteFile(f.Out, data, 0o644); err != nil {
			return err
		}
	}
	if f.Benchfmt != "" {
		if err := writeBenchfmtFile(f.Benchfmt, file, pkg); err != nil {
			return err
		}
	}
	md, err := report.Markdown([]*schema.File{file})
	if err != nil {
		return fmt.Errorf("rendering the report: %w", err)
	}
	_, err = io.WriteString(w, md)
	return err
}

func writeBenchfmtFile(path string, file *schema.File, pkg string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteBenchfmt(out, file, pkg); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
