import { fetch, idempotencyKey, RequestInit, Response } from '@berm/guest';

const API = 'http://orders.example.com/v1';

/** What to order. */
@json
class OrderArgs {
  /** The item, by its catalogue name. */
  item!: string;
  /** How many. */
  quantity: u32 = 1;
}

/** An order the service placed. */
@json
class Order {
  /** The service's id of the order: what cancel takes. */
  id: string = '';
  item: string = '';
  quantity: u32 = 0;
}

/** Whether the order of an idempotency key was placed, and the order when it was. */
@json
class Status {
  /** True when the service holds an order placed with the key. */
  done: bool = false;
  /** The order, when done. */
  result: Order | null = null;
}

/** Which order to cancel. */
@json
class CancelArgs {
  /** The order's id, as place answered it. */
  id!: string;
}

/** A cancelled order. */
@json
class Cancelled {
  id: string = '';
  cancelled: bool = false;
}

/** A message to send. */
@json
class NotifyArgs {
  /** Who to send it to. */
  to!: string;
  /** What to say. */
  message!: string;
}

/** A message the service accepted. */
@json
class Sent {
  /** The service's id of the message. */
  id: string = '';
}

/** A request to the service with its credentials; `{secret:orders}` is filled in by the host. */
function request(method: string): RequestInit {
  return new RequestInit(method).header('authorization', 'Bearer {secret:orders}').header('accept', 'application/json');
}

/** The response, when the service answered `expected`; else the tool's error, saying what it answered. */
function answered(what: string, url: string, init: RequestInit, expected: i32): Response {
  const result = fetch(url, init);
  if (!result.ok) throw new Error('the order service was not reached to ' + what + ': ' + result.message);
  const response = result.get();
  if (response.status != expected && !(expected == 201 && response.status == 200))
    throw new Error('the order service answered ' + response.status.toString() + ' to ' + what);
  return response;
}

/**
 * Places an order. The service keeps one order per Idempotency-Key, so a retry with the key is answered
 * the order already placed.
 * @effect external_write
 * @retry idempotency_key
 * @reconcile status
 * @compensation cancel
 */
export function place(args: OrderArgs): Order {
  // The host fills {idempotency-key} in: the client's key, or one bermd made for the call.
  const init = request('POST')
    .header('content-type', 'application/json')
    .header('idempotency-key', '{idempotency-key}')
    .text(JSON.stringify<OrderArgs>(args));
  return answered('place an order', API + '/orders', init, 201).json<Order>();
}

/**
 * Whether the place call of this call's idempotency key placed an order, and the order when it did: a
 * reconcile tool, called with the write's arguments and key.
 * @query
 */
export function status(args: OrderArgs): Status {
  const key = idempotencyKey();
  if (key === null) throw new Error('status looks an order up by the idempotency key of its place call, and this call has none');
  const result = fetch(API + '/orders?key=' + encodeURIComponent(key), request('GET'));
  if (!result.ok) throw new Error('the order service was not reached to look the order up: ' + result.message);
  const response = result.get();
  const status = new Status();
  if (response.status == 404) return status;
  if (response.status != 200) throw new Error('the order service answered ' + response.status.toString() + ' to a lookup');
  status.done = true;
  status.result = response.json<Order>();
  return status;
}

/**
 * Cancels a placed order.
 * @effect external_write
 * @retry idempotency_key
 */
export function cancel(args: CancelArgs): Cancelled {
  const init = request('POST').header('idempotency-key', '{idempotency-key}');
  return answered('cancel ' + args.id, API + '/orders/' + encodeURIComponent(args.id) + '/cancel', init, 200).json<Cancelled>();
}

/**
 * Sends a message. The service does not deduplicate messages, so a call whose answer was lost is not
 * retried: bermd answers outcome-unknown.
 * @effect external_write
 * @retry none
 */
export function notify(args: NotifyArgs): Sent {
  const init = request('POST').header('content-type', 'application/json').text(JSON.stringify<NotifyArgs>(args));
  return answered('send a message', API + '/notifications', init, 201).json<Sent>();
}
