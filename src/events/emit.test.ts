import { describe, expect, it } from 'bun:test'
import { eq } from 'drizzle-orm'
import { testCore } from '../../tests/support/core'
import { events } from './schema'

const core = await testCore()

describe('emit', () => {
  it('records an event in the outbox with an evt_ id and the clock time', async () => {
    const id = await core.emit(
      'user.created',
      'ws-1',
      { user_id: 'usr_1', name: 'Ada' },
      { tenantId: 'ten_1' },
    )
    expect(id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/)
    const [row] = await core.db.select().from(events).where(eq(events.id, id))
    expect(row).toEqual({
      id,
      type: 'user.created',
      workspaceId: 'ws-1',
      tenantId: 'ten_1',
      data: { user_id: 'usr_1', name: 'Ada' },
      createdAt: core.clock.now(),
    })
  })

  it('writes inside the caller transaction: a rollback leaves no event', async () => {
    let id = ''
    await expect(
      core.store.tx(async (tx) => {
        id = await core.emit('plan.changed', 'ws-1', { plan: 'pro' }, { tx })
        throw new Error('business rule failed')
      }),
    ).rejects.toThrow('business rule failed')
    expect(id).toMatch(/^evt_/)
    expect(await core.db.select().from(events).where(eq(events.id, id))).toEqual([])
  })

  it('issues sortable ids', async () => {
    const a = await core.emit('session.started', 'ws-1', {})
    core.clock.advance(1)
    const b = await core.emit('session.ended', 'ws-1', {})
    expect(a < b).toBe(true)
  })
})
