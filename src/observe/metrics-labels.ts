// Bounded label values: a label takes at most `max` distinct values, later ones are counted under
// `(other)`, so no caller can grow the number of series by making names up.
export const OTHER = '(other)';
export const UNKNOWN = '(unknown)';

export class BoundedLabel {
  private readonly seen = new Set<string>();

  constructor(private readonly max: number) {}

  of(value: string): string {
    if (this.seen.has(value)) return value;
    if (this.seen.size >= this.max) return OTHER;
    this.seen.add(value);
    return value;
  }
}
