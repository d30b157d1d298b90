// abort: an assertion that fails and an error thrown, each reaching the
// host's abort with its message, file, line and column.
import { ethereum } from '@graphprotocol/graph-ts';

export function handleAssert(event: ethereum.Event): void {
  assert(event.parameters.length == 0, 'the assertion');
}

export function handleThrow(event: ethereum.Event): void {
  throw new Error('thrown');
}
