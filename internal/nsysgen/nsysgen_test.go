package nsysgen

import (
	"database/sql"
	"path/filepath"
	"testing"
)

func TestSynthetic(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.sqlite")
	if err := Synthetic(p, 1000); err != nil {
		t.Fatal(err)
	}
	if err := Build(p, "SELECT 1"); err == nil {
		t.Errorf("Build overwrote an existing file")
	}
	db, err := sql.Open("sqlite3", "file:"+p+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for table, want := range map[string]int{"CUPTI_ACTIVITY_KIND_KERNEL": 1000, "CUPTI_ACTIVITY_KIND_RUNTIME": 1000} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil || n != want {
			t.Errorf("%s: %d rows (%v), want %d", table, n, err, want)
		}
	}
	var bad int
	if err := db.QueryRow(`SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
		ON r.correlationId = k.correlationId WHERE r.start IS NULL OR r."end" > k.start`).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("%d kernels without an earlier launch (%v)", bad, err)
	}
}
