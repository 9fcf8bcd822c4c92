import { describe, expect, it } from 'vitest';
import { createTimeSlice } from './time-slice.js';

describe('createTimeSlice', () => {
  const clocked = (deadline: number) => {
    let time = 0;
    const slice = createTimeSlice(deadline, () => time);
    return { slice, at: (ms: number) => void (time = ms) };
  };

  it('gives the first round room, then rounds while one as long as the longest so far, with half again, ends by the deadline', () => {
    const { slice, at } = clocked(1000);
    expect(slice.roomForRound()).toBe(true); // round 1 starts at 0
    at(200);
    expect(slice.roomForRound()).toBe(true); // longest 200: 200 + 300 ≤ 1,000
    at(300);
    expect(slice.roomForRound()).toBe(true); // a shorter round keeps the longest at 200: 300 + 300 ≤ 1,000
    expect(slice.ranOut).toBe(false);
    at(701);
    expect(slice.roomForRound()).toBe(false); // longest 401: 701 + 601.5 > 1,000
    expect(slice.ranOut).toBe(true);
    expect(slice.deadline).toBe(1000);
  });

  it('has no room even for a first round that would start past the deadline', () => {
    const { slice, at } = clocked(1000);
    at(1001);
    expect(slice.roomForRound()).toBe(false);
    expect(slice.ranOut).toBe(true);
  });
});
