// Copying a key from parsed JSON onto a plain object: JSON.parse makes "__proto__" an ordinary
// member, and a copy must keep it one, not let it replace the copy's prototype.

/** Sets an own property, even one named `__proto__` (which assignment would take as the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}
