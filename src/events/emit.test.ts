import { describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { testCore } from '../../tests/support/core'
import { events } from './schema'

describe('emit', () => {
  const core = testCore()

  it('records an event in the outbox with an evt_ id and the clock time', () => {
    const id = core.emit('user.created', 'ws-1', { user_id: 'usr_1', name: 'Ada' }, { tenantId: 'ten_1' })
    expect(id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/)
    const row = core.db.select().from(events).where(eq(events.id, id)).get()
    expect(row).toEqual({
      id,
      type: 'user.created',
      workspaceId: 'ws-1',
      tenantId: 'ten_1',
      data: { user_id: 'usr_1', name: 'Ada' },
      createdAt: core.clock.now(),
    })
  })

  it('writes inside the caller transaction: a rollback leaves no event', () => {
    let id = ''
    expect(() =>
      core.db.transaction((tx) => {
        id = core.emit('plan.changed', 'ws-1', { plan: 'pro' }, { tx })
        throw new Error('business rule failed')
      }),
    ).toThrow('business rule failed')
    expect(core.db.select().from(events).where(eq(events.id, id)).get()).toBeUndefined()
  })

  it('issues sortable ids', () => {
    const a = core.emit('session.started', 'ws-1', {})
    core.clock.advance(1)
    const b = core.emit('session.ended', 'ws-1', {})
    expect(a < b).toBe(true)
  })
})
