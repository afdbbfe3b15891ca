// The host calls of the guest ABI (docs/contract.md §4): a UTF-8 JSON request in, a packed
// (ptr << 32) | len answer out, which the host writes into memory it takes from berm_alloc.
// Each is imported only when a harness uses the function that calls it: AssemblyScript compiles
// what is reachable, so a harness that never fetches never imports "berm" "http.fetch".

// @ts-expect-error: decorator
@external("berm", "call")
export declare function berm_call(ptr: usize, len: i32): i64;

// @ts-expect-error: decorator
@external("berm", "log")
export declare function berm_log(ptr: usize, len: i32): i64;

// @ts-expect-error: decorator
@external("berm", "emit")
export declare function berm_emit(ptr: usize, len: i32): i64;

// @ts-expect-error: decorator
@external("berm", "idempotency_key")
export declare function berm_idempotency_key(ptr: usize, len: i32): i64;

// A syscall beyond the ABI's own, served by every bermd to a harness declaring it.
// @ts-expect-error: decorator
@external("berm", "resource_updated")
export declare function berm_resource_updated(ptr: usize, len: i32): i64;

// A syscall beyond the ABI's own: its dotted name is module.field, "berm" + "http.fetch".
// @ts-expect-error: decorator
@external("berm", "http.fetch")
export declare function berm_http_fetch(ptr: usize, len: i32): i64;

// @ts-expect-error: decorator
@external("berm", "progress")
export declare function berm_progress(ptr: usize, len: i32): i64;

// Syscalls that ask the client making the call: declared by the transform when the code makes them.
// @ts-expect-error: decorator
@external("berm", "elicit")
export declare function berm_elicit(ptr: usize, len: i32): i64;

// @ts-expect-error: decorator
@external("berm", "sample")
export declare function berm_sample(ptr: usize, len: i32): i64;
