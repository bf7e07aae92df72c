/**
 * `sluice/dbos`: durable turns inside DBOS Transact workflows (`@dbos-inc/dbos-sdk`, an optional
 * peer dependency; only this entry loads it). See docs/durability.md "Inside DBOS".
 */
/// <reference types="node" preserve="true" />
export { durableTurn, durableTurnId, turnStepName, closeDurableTurnStores, assertWorkflowContext, DurableTurnError } from '../dbos/durableTurn';
export type { DurableTurnOptions, DurableTurnResult, DurableCall, DurableResumedHow, DurableTurnErrorCode } from '../dbos/durableTurn';
