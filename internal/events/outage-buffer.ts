/**
 * What the NATS bus keeps while it is disconnected: the messages it could not send, in
 * order, up to a bound in bytes; past the bound they are dropped and counted (per outage and
 * ever), so that an outage costs bounded memory and never blocks or fails a writer.
 */
export class OutageBuffer {
  private messages: [subject: string, payload: string][] = [];
  private bytes = 0;
  /** Messages dropped since the current (or last) outage began. */
  droppedNow = 0;
  /** Messages dropped since the bus opened. */
  droppedTotal = 0;

  constructor(readonly maxBytes: number) {}

  /** Keeps a message; false (and counted as dropped) when it does not fit. */
  add(subject: string, payload: string): boolean {
    const size = subject.length + payload.length;
    if (this.bytes + size > this.maxBytes) {
      this.countDrop();
      return false;
    }
    this.messages.push([subject, payload]);
    this.bytes += size;
    return true;
  }

  /** Counts a message that was lost; returns how many this outage has lost so far. */
  countDrop(): number {
    this.droppedTotal++;
    return ++this.droppedNow;
  }

  /** An outage begins: its drops are counted from zero. */
  outageBegins(): void {
    this.droppedNow = 0;
  }

  /** Everything kept, in order; the buffer is empty afterwards. */
  take(): [subject: string, payload: string][] {
    const out = this.messages;
    this.messages = [];
    this.bytes = 0;
    return out;
  }
}
