export * from './events'
export * from './jobs'
