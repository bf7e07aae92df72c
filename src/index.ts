export * from './wire/events';
export * from './release/output';
