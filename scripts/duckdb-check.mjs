// duckdb-check.mjs DATASET_DIR — opens a tracedx batch dataset with DuckDB
// and runs the aggregation queries of docs/batch.md, printing one JSON
// object. Used by the interoperability test (export/parquet) and by hand:
//
//   npm install --prefix .cache/duckdb @duckdb/node-api
//   node scripts/duckdb-check.mjs out/dataset
//
// The module is looked up in $DUCKDB_NODE_MODULES, else in
// .cache/duckdb/node_modules next to this repository's root.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = process.env.DUCKDB_NODE_MODULES || path.join(here, '..', '.cache', 'duckdb', 'node_modules');
const require = createRequire(path.join(modules, 'noop.js'));
const { DuckDBInstance } = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node scripts/duckdb-check.mjs DATASET_DIR');
  process.exit(2);
}
const glob = (table) => `read_parquet('${path.join(dir, table).replaceAll("'", "''")}*.parquet')`;

const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const q = async (sql) => (await con.runAndReadAll(sql)).getRowObjectsJson();

const out = { counts: {} };
for (const t of ['inputs', 'metrics', 'findings', 'kernels']) {
  const [row] = await q(`SELECT CAST(count(*) AS INTEGER) AS n FROM ${glob(t)}`);
  out.counts[t] = row.n;
}
// The aggregation query of docs/batch.md: findings per rule and severity
// over all inputs (and shards), with how many inputs have them.
out.findings_by_rule = await q(`
  SELECT rule, severity, CAST(count(*) AS INTEGER) AS findings,
         CAST(count(DISTINCT input) AS INTEGER) AS inputs
  FROM ${glob('findings')}
  GROUP BY rule, severity
  ORDER BY findings DESC, rule, severity`);
out.status = await q(`
  SELECT status, CAST(count(*) AS INTEGER) AS inputs, CAST(sum(bytes) AS DOUBLE) AS bytes
  FROM ${glob('inputs')} GROUP BY status ORDER BY status`);
out.top_kernels = await q(`
  SELECT kernel, CAST(sum(count) AS DOUBLE) AS launches, CAST(sum(total_ns) AS DOUBLE) AS total_ns
  FROM ${glob('kernels')} GROUP BY kernel ORDER BY total_ns DESC, kernel LIMIT 10`);
out.worst_idle = await q(`
  SELECT input, device, value AS idle_pct
  FROM ${glob('metrics')} WHERE metric = 'gpu.idle_pct'
  ORDER BY value DESC, input, device LIMIT 10`);
con.closeSync();
db.closeSync();
console.log(JSON.stringify(out));
