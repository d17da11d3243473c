// How the HTTP front answers with an error: the status comes from the error catalogue, for the
// transport's own refusals (a local code each) and for modern-era answers alike.
import type { ServerResponse } from 'node:http';
import { LOCAL_ERRORS, httpStatusOf, type LocalCode } from '../errors/catalogue.js';
import { LocalError, toWire } from '../errors/errors.js';
import type { RequestId, WireErrorBody } from '../jsonrpc/message.js';
import { answerJson } from './json-answer.js';

/** The status of an HTTP answer carrying this error: the catalogue's, else 200 (the error in the body). */
export function statusFor(error: WireErrorBody): number {
  return httpStatusOf(error) ?? 200;
}

/** The status the catalogue gives a transport refusal. */
export function statusOf(reason: LocalCode): number {
  return LOCAL_ERRORS[reason].http ?? 200;
}

/** Answers a request with a local code's error, at the status the catalogue gives it. */
export function refuse(
  res: ServerResponse,
  reason: LocalCode,
  message: string,
  id: RequestId | null = null,
  headers: Record<string, string> = {},
): void {
  answerError(res, id, toWire(new LocalError(reason, message)), headers);
}

/** Answers a request with this error as the whole answer (nothing more once headers went out). */
export function answerError(
  res: ServerResponse,
  id: RequestId | null,
  error: WireErrorBody,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return void res.end();
  answerJson(res, JSON.stringify({ jsonrpc: '2.0', id, error }), headers, statusFor(error));
}
