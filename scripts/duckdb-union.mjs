// duckdb-union.mjs SINGLE_DATASET SHARDED_DATASET — checks with DuckDB that
// every table of a sharded batch (the union of its shard files) equals the
// single-machine table row for row (EXCEPT ALL both ways, counts equal).
// Prints one line per table; exits 1 on a difference. Used by
// scripts/slurm-e2e.sh. The module is found as in duckdb-check.mjs.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = process.env.DUCKDB_NODE_MODULES || path.join(here, '..', '.cache', 'duckdb', 'node_modules');
const require = createRequire(path.join(modules, 'noop.js'));
const { DuckDBInstance } = await import(pathToFileURL(require.resolve('@duckdb/node-api')).href);

const [single, sharded] = process.argv.slice(2);
if (!single || !sharded) {
  console.error('usage: node scripts/duckdb-union.mjs SINGLE_DATASET SHARDED_DATASET');
  process.exit(2);
}
const lit = (s) => `'${s.replaceAll("'", "''")}'`;
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const one = async (sql) => Number(Object.values((await con.runAndReadAll(sql)).getRowObjectsJson()[0])[0]);

const tables = fs.readdirSync(single).filter((f) => f.endsWith('.parquet')).map((f) => f.replace(/\.parquet$/, '')).sort();
if (tables.length === 0) {
  console.error(`no tables in ${single}`);
  process.exit(1);
}
let bad = 0;
for (const t of tables) {
  const a = `read_parquet(${lit(path.join(single, t + '.parquet'))})`;
  const b = `read_parquet(${lit(path.join(sharded, t + '-shard-*.parquet'))})`;
  const na = await one(`SELECT count(*) FROM ${a}`);
  const nb = await one(`SELECT count(*) FROM ${b}`);
  const onlyA = await one(`SELECT count(*) FROM (SELECT * FROM ${a} EXCEPT ALL SELECT * FROM ${b})`);
  const onlyB = await one(`SELECT count(*) FROM (SELECT * FROM ${b} EXCEPT ALL SELECT * FROM ${a})`);
  const ok = na === nb && onlyA === 0 && onlyB === 0;
  if (!ok) bad++;
  console.log(`${ok ? 'same' : 'DIFFERENT'} ${t}: ${na} rows single, ${nb} in the shards' union; ${onlyA} only single, ${onlyB} only shards`);
}
process.exit(bad ? 1 : 0);
