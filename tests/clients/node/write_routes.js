// node-postgres for weir serve's read-role test: every route of the JSON file given as the
// argument ([{id, steps: [{sql, refused}], multi}]) on a fresh connection, in three modes —
// simple protocol, extended with the unnamed statement, extended with named statements — and
// prints {mode: {route index: [outcome per step]}}, an outcome being "ok" or the SQLSTATE.
//
//   NODE_PATH=.deps/clients/node/node_modules WEIR_PORT=5433 WEIR_USER=... WEIR_PASSWORD=... \
//       node tests/clients/node/write_routes.js routes.json
'use strict'

const fs = require('fs')
const { Client } = require('pg')

async function run(client, mode, sql, n) {
  const query = mode === 'simple' ? sql
    : mode === 'unnamed' ? { text: sql, queryMode: 'extended' }
      : { text: sql, name: `route_${n}` }
  try {
    await client.query(query)
    return 'ok'
  } catch (error) {
    return error.code || String(error)
  }
}

async function main() {
  const routes = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'))
  const out = {}
  let n = 0
  for (const mode of ['simple', 'unnamed', 'named']) {
    out[mode] = {}
    for (const [index, route] of routes.entries()) {
      if (route.multi && mode !== 'simple') continue
      const client = new Client({
        host: '127.0.0.1',
        port: Number(process.env.WEIR_PORT),
        user: process.env.WEIR_USER,
        password: process.env.WEIR_PASSWORD,
        database: 'lake',
        ssl: { rejectUnauthorized: false },
      })
      await client.connect()
      const outcome = []
      for (const step of route.steps) outcome.push(await run(client, mode, step.sql, n++))
      await client.end()
      out[mode][index] = outcome
    }
  }
  process.stdout.write(JSON.stringify(out))
}

main().catch((error) => {
  process.stderr.write(String(error.stack || error) + '\n')
  process.exit(1)
})
