// Keys that come from outside (parsed JSON, a config's names, a command line) on plain objects: a
// copy must keep "__proto__" an ordinary member rather than let it replace the copy's prototype,
// and a lookup must not find what every object inherits (`constructor`, `toString`).

/** Sets an own property, even one named `__proto__` (which assignment would take as the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** `record[key]` if the record has it as its own; never what every object inherits. */
export function ownValue<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
