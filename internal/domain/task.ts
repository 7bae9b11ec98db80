/**
 * Tasks (compat 4.10): work items a device carries out, with a status, steps and a target
 * (an object or a location).
 */
import type { Data, DataPatch, Location } from './types.js';

export const TASK_STATUSES = [
  '$hkt_not_started',
  '$hkt_in_progress',
  '$hkt_completed',
  '$hkt_failed',
  '$hkt_canceled',
  '$hkt_paused',
  '$hkt_blocked',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export interface TaskStep {
  label: string | null;
  status: TaskStatus;
  data: Data;
}

export interface TaskRecord {
  id: string;
  label: string | null;
  description: string | null;
  status: TaskStatus;
  steps: TaskStep[];
  /** Exactly one of targetId and location is set. */
  targetId: string | null;
  location: Location | null;
  data: Data;
  created: string;
  updated: string;
}

export interface TaskPatch {
  label?: string | null;
  description?: string | null;
  status?: TaskStatus;
  steps?: TaskStep[];
  targetId?: string | null;
  location?: Location | null;
  data?: DataPatch;
}

export interface TaskChange {
  realm: string;
  id: string;
  old: TaskRecord | null;
  new: TaskRecord | null;
}
