;; A berm program with two tools, written by hand against the guest ABI (abi_version 1).
;;   echo(text, times?) -> the arguments it was given
;;   size(text)         -> {"bytes": <length of the arguments' JSON>}
;; Memory layout: [0, 1024) holds constant strings; berm_alloc bumps from 1024 upward.
;; Every call gets a fresh instance, so the bump allocator never needs to free.
(module
  (memory (export "memory") 1)
  (global $next (mut i32) (i32.const 1024))

  (data (i32.const 0) "{\"ok\":")            ;; 6 bytes
  (data (i32.const 16) "{\"ok\":{\"bytes\":")  ;; 15 bytes
  (data (i32.const 32) "}}")                  ;; 2 bytes

  (func $alloc (export "berm_alloc") (param $len i32) (result i32)
    (local $ptr i32)
    (local.set $ptr (global.get $next))
    (global.set $next (i32.add (local.get $ptr) (local.get $len)))
    ;; grow when the bump pointer passes the end of memory
    (if (i32.gt_u (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
      (then
        (if (i32.eq
              (memory.grow (i32.add (i32.div_u (i32.sub (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
                                               (i32.const 65536))
                                    (i32.const 1)))
              (i32.const -1))
          (then unreachable))))
    (local.get $ptr))

  (func $pack (param $ptr i32) (param $len i32) (result i64)
    (i64.or (i64.shl (i64.extend_i32_u (local.get $ptr)) (i64.const 32))
            (i64.extend_i32_u (local.get $len))))

  ;; {"ok": <args>}
  (func (export "berm_tool_echo") (param $ptr i32) (param $len i32) (result i64)
    (local $out i32)
    (local.set $out (call $alloc (i32.add (local.get $len) (i32.const 7))))
    (memory.copy (local.get $out) (i32.const 0) (i32.const 6))
    (memory.copy (i32.add (local.get $out) (i32.const 6)) (local.get $ptr) (local.get $len))
    (i32.store8 (i32.add (local.get $out) (i32.add (local.get $len) (i32.const 6))) (i32.const 125))
    (call $pack (local.get $out) (i32.add (local.get $len) (i32.const 7))))

  ;; {"ok":{"bytes":<len>}}
  (func (export "berm_tool_size") (param $ptr i32) (param $len i32) (result i64)
    (local $out i32) (local $digits i32) (local $n i32) (local $p i32)
    ;; count decimal digits of len (at least one)
    (local.set $digits (i32.const 1))
    (local.set $n (local.get $len))
    (block $done
      (loop $count
        (br_if $done (i32.lt_u (local.get $n) (i32.const 10)))
        (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
        (local.set $digits (i32.add (local.get $digits) (i32.const 1)))
        (br $count)))
    (local.set $out (call $alloc (i32.add (local.get $digits) (i32.const 17))))
    (memory.copy (local.get $out) (i32.const 16) (i32.const 15))
    ;; write digits right to left
    (local.set $n (local.get $len))
    (local.set $p (i32.add (local.get $out) (i32.add (i32.const 14) (local.get $digits))))
    (loop $write
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (br_if $write (i32.ne (local.get $n) (i32.const 0))))
    (memory.copy (i32.add (local.get $out) (i32.add (i32.const 15) (local.get $digits))) (i32.const 32) (i32.const 2))
    (call $pack (local.get $out) (i32.add (local.get $digits) (i32.const 17))))
)
