// log.log: one message at each level graph-ts has (graph-ts formats the
// message; the host receives the level and the text), then a critical one,
// which fails the handler.
import { ethereum, log } from '@graphprotocol/graph-ts';

export function handleLog(event: ethereum.Event): void {
  log.debug('debug', []);
  log.info('info {} of {}', ['one', 'two']);
  log.warning('warning €', []);
  log.error('error', []);
}

export function handleCritical(event: ethereum.Event): void {
  log.critical('critical', []);
  log.info('after the critical log', []);
}
