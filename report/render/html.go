package render

import (
	"bytes"
	"errors"

	"github.com/tollgate-dev/tollgate/report"
)

func writeHTML(buf *bytes.Buffer, r *report.Results) error {
	return errors.New("html is not implemented yet")
}
