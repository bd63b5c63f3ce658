// node-postgres against `weir serve`: named prepared statements reused with new values, and a
// parameterised INSERT reused. Prints one JSON document: the rows of every execution, and the
// extended-protocol messages the client wrote (Parse per statement name, Bind in total), read
// off the TLS stream itself, so the caller can check each name was parsed once and then only
// bound and executed.
//
//   NODE_PATH=.deps/clients/node/node_modules WEIR_PORT=5433 WEIR_PASSWORD=... \
//       node tests/clients/node/named_statements.js
//
// Expects the table `things (id INTEGER, name VARCHAR, score DOUBLE, note VARCHAR, flag
// BOOLEAN)` with ids 0..19 (see tests/e2e/test_serve_node.py).
'use strict'

const { Client } = require('pg')

// Counts the frontend messages in what the client writes (each type byte + int32 length).
function countMessages(stream, counts) {
  const write = stream.write.bind(stream)
  stream.write = (chunk, ...rest) => {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk)
    let at = 0
    while (at + 5 <= buffer.length) {
      const type = String.fromCharCode(buffer[at])
      const length = buffer.readInt32BE(at + 1)
      if (type === 'P') {
        const body = buffer.subarray(at + 5, at + 1 + length)
        const name = body.subarray(0, body.indexOf(0)).toString('utf8')
        counts.parse[name] = (counts.parse[name] || 0) + 1
      } else if (type === 'B') {
        counts.bind += 1
      }
      at += 1 + length
    }
    return write(chunk, ...rest)
  }
}

async function main() {
  const client = new Client({
    host: '127.0.0.1',
    port: Number(process.env.WEIR_PORT),
    user: 'weir',
    database: 'lake',
    password: process.env.WEIR_PASSWORD,
    ssl: { rejectUnauthorized: false },
  })
  await client.connect()
  const counts = { parse: {}, bind: 0 }
  countMessages(client.connection.stream, counts)
  const out = {}
  const run = async (config) => {
    const result = await client.query(config)
    return { command: result.command, rowCount: result.rowCount, rows: result.rows }
  }

  // int parameter: ten executions of one named statement.
  const byId = 'SELECT id, name, score, note, flag FROM things WHERE id = $1'
  out.by_id = []
  for (const id of [0, 1, 2, 3, 4, 5, 17, 18, 19, 42]) {
    out.by_id.push(await run({ name: 'thing_by_id', text: byId, values: [id] }))
  }

  // text parameter, including one that matches nothing and one with quotes and non-ASCII.
  const byName = 'SELECT id FROM things WHERE name = $1'
  out.by_name = []
  for (const name of ['thing 7', 'thing 12', "it's ünïcode", 'thing 0']) {
    out.by_name.push(await run({ name: 'thing_by_name', text: byName, values: [name] }))
  }

  // int, text, float, boolean and NULL parameters, ten executions with new values each time.
  const echo = 'SELECT $1::INTEGER AS i, $2::VARCHAR AS t, $3::DOUBLE AS f, $4::BOOLEAN AS b'
  const echoValues = [
    [1, 'one', 1.5, true],
    [-2, 'two', -0.125, false],
    [null, 'three', 3.0, true],
    [4, null, 1e10, false],
    [5, 'fünf', null, true],
    [6, '', 0.1, null],
    [2147483647, 'max', -1e-7, false],
    [-2147483648, "quote ' here", 123456.789, true],
    [null, null, null, null],
    [10, 'ten', 2.5, false],
  ]
  out.echo = []
  for (const values of echoValues) {
    out.echo.push(await run({ name: 'echo_types', text: echo, values }))
  }

  // A parameterised INSERT reused, then read back (also through the first named statement).
  const insert = 'INSERT INTO things (id, name, score, note, flag) VALUES ($1, $2, $3, $4, $5)'
  out.insert = []
  for (const values of [
    [100, 'new 100', 0.5, 'n100', true],
    [101, 'new 101', -1.25, null, false],
    [102, "new '102'", 1e6, 'n102', null],
    [103, 'new 103', null, 'n103', true],
    [104, 'new 104', 4.75, 'n104', false],
  ]) {
    out.insert.push(await run({ name: 'add_thing', text: insert, values }))
  }
  out.inserted = await run(
    'SELECT id, name, score, note, flag FROM things WHERE id >= 100 ORDER BY id')
  out.by_id_after_insert = await run({ name: 'thing_by_id', text: byId, values: [103] })

  // No `binary: true` here: node-postgres 8 decodes every DataRow field as UTF-8 text
  // (pg-protocol: "Binary mode not supported yet"), so binary doubles arrive corrupted from any
  // server; binary results are covered by the psycopg test.
  out.messages = counts
  await client.end()
  process.stdout.write(JSON.stringify(out) + '\n')
}

main().catch((error) => {
  const detail = JSON.stringify({ code: error.code, message: error.message })
  process.stderr.write(`${error.stack}\n${detail}\n`)
  process.exit(1)
})
