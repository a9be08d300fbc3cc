// cds-serve's own server with one route more, for the tests only:
// POST /-/reset empties every table of the database, so that a service
// that has served one test serves the next as a new one would (nothing in
// it), without the start of another node (captest.Server.Reset).
const cds = require('@sap/cds')

cds.on('bootstrap', (app) => {
  app.post('/-/reset', async (_req, res) => {
    try {
      const db = await cds.connect.to('db')
      for (const entity of db.model.each('entity')) {
        if (entity.query || entity.projection || entity['@cds.persistence.skip']) continue // views
        await db.run(DELETE.from(entity))
      }
      res.sendStatus(204)
    } catch (err) {
      res.status(500).send(String(err && err.stack || err))
    }
  })
})

module.exports = cds.server
