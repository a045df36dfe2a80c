package nsysgen

import (
	"database/sql"
	"errors"
	"fmt"
	"os"

	_ "github.com/mattn/go-sqlite3" // registers the "sqlite3" driver
)

// Build creates a new database at dst and runs the SQL script in it. dst must
// not exist.
func Build(dst, script string) error {
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("nsysgen: %s already exists", dst)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	db, err := sql.Open("sqlite3", "file:"+dst+"?mode=rwc&_journal_mode=OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(script); err != nil {
		return fmt.Errorf("nsysgen: %v", err)
	}
	return db.Close()
}

// Exec runs an SQL script on an existing database (tests use it to spoil or
// thin out a generated export).
func Exec(path, script string) error {
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Exec(script); err != nil {
		return fmt.Errorf("nsysgen: %v", err)
	}
	return db.Close()
}

// BuildFile is Build with the script read from a file.
func BuildFile(dst, scriptPath string) error {
	b, err := os.ReadFile(scriptPath)
	if err != nil {
		return err
	}
	return Build(dst, string(b))
}

// Synthetic creates a 2024-style export at dst with n kernels, each launched
// by one cudaLaunchKernel row, on 2 devices, 4 streams, 2 threads and 64
// kernel names. The rows are generated inside SQLite, so that millions take
// seconds.
func Synthetic(dst string, n int) error {
	script := fmt.Sprintf(`
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2024.5.1.113'), ('EXPORT_SCHEMA_VERSION', '3.13.0');
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000, '2023-11-14T22:13:20', '2023-11-14T22:13:20');
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, busLocation TEXT, totalMemory INTEGER, memoryBandwidth INTEGER,
  smCount INTEGER, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
INSERT INTO TARGET_INFO_GPU VALUES (281474976710656, 0, 'NVIDIA H100 80GB HBM3', '0000:1b:00.0', 85899345920, 3352320000000, 132, 0, 9, 0),
  (281474976710656, 1, 'NVIDIA H100 80GB HBM3', '0000:43:00.0', 85899345920, 3352320000000, 132, 1, 9, 0);
CREATE TABLE ThreadNames (nameId INTEGER, priority INTEGER, globalTid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER, registersPerThread INTEGER NOT NULL,
  gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL, blockY INTEGER NOT NULL,
  blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL, dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL,
  localMemoryTotal INTEGER NOT NULL, gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 63)
INSERT INTO StringIds SELECT i, 'void at::native::synthetic_kernel_' || i || '<float, 128>(at::TensorIteratorBase &, float)' FROM s;
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 63)
INSERT INTO StringIds SELECT 64 + i, 'synthetic_kernel_' || i FROM s;
INSERT INTO StringIds VALUES (200, 'cudaLaunchKernel_v7000'), (201, 'python3'), (202, 'pt_autograd_0');
INSERT INTO ThreadNames VALUES (201, 0, 281546145660928 + 4242), (202, 0, 281546145660928 + 4243);
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < %[1]d - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
SELECT 1000000 + i * 2000, 1000000 + i * 2000 + 1500 + (i %% 7) * 50, i %% 2, 1, NULL, 7 + (i %% 4), i + 1, 281546145660928, i %% 64, 64 + (i %% 64),
  NULL, 1, 0, 32 + (i %% 3), 108 * (1 + i %% 5), 1, 1, 256, 1, 1, 1024, 4096 * (i %% 2), 0, 0, i, 0, NULL, 0 FROM s;
WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < %[1]d - 1)
INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME
SELECT 1000000 + i * 2000 - 900, 1000000 + i * 2000 - 400, 0, 281546145660928 + 4242 + (i %% 2), i + 1, 200, 0, 0 FROM s;
`, n)
	return Build(dst, script)
}
