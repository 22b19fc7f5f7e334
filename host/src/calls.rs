//! The mapper's calls on a loaded module, one method per export of
//! `docs/ABI.md`: inputs copied into blocks from `mp_alloc`, the status
//! checked, outputs read back from linear memory where `mp_output_info`
//! says they are (no call: `mp_output_ptr` and `mp_output_len` serve
//! [`BrokerModule::output`], which asks of one mapper).

use super::*;

impl BrokerModule {
    /// `mp_mapper_new` with a JSON config; returns the handle.
    pub fn mapper_new(&mut self, config_json: &str) -> Result<i32, AbiError> {
        let (p, l) = self.put(config_json.as_bytes())?;
        // Read the outcome (and any message) before mp_free, whose success
        // clears the message.
        let result = self
            .mapper_new
            .call(&mut self.store, (p, l))
            .map_err(trap)
            .and_then(|s| self.check(s));
        self.release(p);
        result
    }

    /// `mp_mapper_free`.
    pub fn mapper_free(&mut self, handle: i32) -> Result<(), AbiError> {
        let s = self
            .mapper_free
            .call(&mut self.store, handle)
            .map_err(trap)?;
        self.check(s).map(drop)
    }

    /// `mp_rewrite` on a copy of `buf` in guest memory; on success `buf`
    /// holds the rewritten bytes.
    pub fn rewrite(
        &mut self,
        handle: i32,
        source: &str,
        buf: &mut [u8],
        now_ms: i64,
        flags: i32,
    ) -> Result<Rewritten, AbiError> {
        let (sp, sl) = self.put(source.as_bytes())?;
        let (bp, bl) = match self.put(buf) {
            Ok(v) => v,
            Err(e) => {
                self.release(sp);
                return Err(e);
            }
        };
        let status = self
            .rewrite
            .call(&mut self.store, (handle, sp, sl, bp, bl, now_ms, flags))
            .map_err(trap);
        let result = status.and_then(|s| self.check(s)).and_then(|consumed| {
            buf.copy_from_slice(&self.read(bp, bl));
            self.rewritten(consumed)
        });
        self.release(sp);
        self.release(bp);
        result
    }

    /// `mp_rewrite_headers` on `fetch`, which stays here: its headers are
    /// gathered into guest slots (`mirrorpid::batch::gather`, at most
    /// `max_slots`), rewritten there, and each changed slot's CRC and PID
    /// written back into `fetch` (`write_back`). The same result as
    /// [`BrokerModule::rewrite`] on the gathered entries.
    pub fn rewrite_headers(
        &mut self,
        handle: i32,
        source: &str,
        fetch: &mut [u8],
        max_slots: usize,
        now_ms: i64,
        flags: i32,
    ) -> Result<Rewritten, AbiError> {
        let (sp, sl) = self.put(source.as_bytes())?;
        let len = fetch.len() as i32;
        let result = self.on_slots(fetch, max_slots, |m, bp, count| {
            let args = (handle, sp, sl, bp, count, len, now_ms, flags);
            m.rewrite_headers.call(&mut m.store, args)
        });
        self.release(sp);
        result
    }

    /// Gathers `fetch`'s headers into guest slots (at most `max_slots`),
    /// runs `rewrite` on them (slots pointer, count) and writes each
    /// changed slot's CRC and PID back into `fetch`.
    fn on_slots(
        &mut self,
        fetch: &mut [u8],
        max_slots: usize,
        rewrite: impl FnOnce(&mut Self, i32, i32) -> wasmtime::Result<i32>,
    ) -> Result<Rewritten, AbiError> {
        let mut slots = Vec::new();
        let offsets = mirrorpid::batch::gather(fetch, max_slots, &mut slots);
        let (bp, bl) = self.put(&slots)?;
        let status = rewrite(self, bp, offsets.len() as i32).map_err(trap);
        let result = status.and_then(|s| self.check(s)).and_then(|consumed| {
            let slots = self.read(bp, bl);
            mirrorpid::batch::write_back(&slots, &offsets, fetch);
            self.rewritten(consumed)
        });
        self.release(bp);
        result
    }

    /// `mp_source`: the token of source cluster `source` on `handle`.
    pub fn source(&mut self, handle: i32, source: &str) -> Result<i32, AbiError> {
        let (sp, sl) = self.put(source.as_bytes())?;
        let result = self
            .source
            .call(&mut self.store, (handle, sp, sl))
            .map_err(trap)
            .and_then(|s| self.check(s));
        self.release(sp);
        result
    }

    /// `mp_rewrite_headers_from`: [`BrokerModule::rewrite_headers`] from
    /// the source of `token` ([`BrokerModule::source`]).
    pub fn rewrite_headers_from(
        &mut self,
        handle: i32,
        token: i32,
        fetch: &mut [u8],
        max_slots: usize,
        now_ms: i64,
        flags: i32,
    ) -> Result<Rewritten, AbiError> {
        let len = fetch.len() as i32;
        self.on_slots(fetch, max_slots, |m, bp, count| {
            let args = (handle, token, bp, count, len, now_ms, flags);
            m.rewrite_headers_from.call(&mut m.store, args)
        })
    }

    /// `mp_map`: the mapped PID, the salt (`None` for a PID below 0), the
    /// pending binding's record (if any) and the snapshot-required flag.
    pub fn map(
        &mut self,
        handle: i32,
        source: &str,
        pid: i64,
        now_ms: i64,
    ) -> Result<Mapped, AbiError> {
        let (sp, sl) = self.put(source.as_bytes())?;
        let status = self
            .map
            .call(&mut self.store, (handle, sp, sl, pid, now_ms))
            .map_err(trap);
        let result = status.and_then(|s| self.check(s)).and_then(|salt| {
            let (out, snapshot_required) = self.last_output()?;
            let malformed = || AbiError {
                code: -1,
                message: "malformed mp_map output".into(),
            };
            let (list, mapped) = out.split_at(out.len().checked_sub(8).ok_or_else(malformed)?);
            let records = parse_records(list).ok_or_else(malformed)?;
            Ok(Mapped {
                mapped: i64::from_be_bytes(mapped.try_into().map_err(|_| malformed())?),
                salt: (salt != abi::MAP_NOT_A_PRODUCER).then_some(salt as u8),
                records,
                snapshot_required,
            })
        });
        self.release(sp);
        result
    }

    /// A successful rewrite's result: `consumed`, the output's records and
    /// the snapshot-required flag.
    fn rewritten(&mut self, consumed: i32) -> Result<Rewritten, AbiError> {
        let (out, snapshot_required) = self.last_output()?;
        Ok(Rewritten {
            consumed: consumed as usize,
            records: record_list(&out)?,
            snapshot_required,
        })
    }

    /// The output of the call that just succeeded and its mapper's
    /// snapshot flag, as `mp_output_info` says (no call into the module):
    /// how this host reads every output it returns.
    fn last_output(&self) -> Result<(Vec<u8>, bool), AbiError> {
        let info = self.output_info().ok_or_else(|| AbiError {
            code: -1,
            message: "malformed mp_output_info".into(),
        })?;
        let out = self.read(info.ptr as i32, info.len as i32);
        if out.len() != info.len as usize {
            return Err(AbiError {
                code: -1,
                message: "mp_output_info points outside linear memory".into(),
            });
        }
        Ok((out, info.snapshot_required))
    }

    /// `mp_rewrite` on a buffer already in guest memory (`put` earlier);
    /// returns the bytes consumed. The records stay in the output buffer.
    pub fn rewrite_in_place(
        &mut self,
        handle: i32,
        (src_ptr, src_len): (i32, i32),
        (buf_ptr, buf_len): (i32, i32),
        now_ms: i64,
        flags: i32,
    ) -> Result<usize, AbiError> {
        let status = self
            .rewrite
            .call(
                &mut self.store,
                (handle, src_ptr, src_len, buf_ptr, buf_len, now_ms, flags),
            )
            .map_err(trap)?;
        self.check(status).map(|n| n as usize)
    }

    /// What `mp_output_ptr`, `mp_output_len` and `mp_snapshot_required`
    /// say of `handle`, as the [`abi::OutputInfo`] that
    /// [`BrokerModule::output_info`] reads without a call.
    pub fn output_info_by_calls(&mut self, handle: i32) -> Result<abi::OutputInfo, AbiError> {
        let (ptr, len, flag) = (
            self.output_ptr.clone(),
            self.output_len.clone(),
            self.snapshot_required.clone(),
        );
        let ptr = self.count(&ptr, handle)?;
        let len = self.count(&len, handle)?;
        let snapshot_required = match self.count(&flag, handle)? {
            0 => false,
            1 => true,
            other => {
                return Err(AbiError {
                    code: -1,
                    message: format!("mp_snapshot_required returned {other}, not 0 or 1"),
                })
            }
        };
        Ok(abi::OutputInfo {
            ptr: ptr as u32,
            len: len as u32,
            snapshot_required,
        })
    }

    /// The output buffer of `handle`, through `mp_output_ptr` and
    /// `mp_output_len` (two calls).
    pub fn output(&mut self, handle: i32) -> Result<Vec<u8>, AbiError> {
        let (ptr, len) = (self.output_ptr.clone(), self.output_len.clone());
        let ptr = self.count(&ptr, handle)?;
        let len = self.count(&len, handle)?;
        Ok(self.read(ptr as i32, len as i32))
    }

    /// The output buffer of `handle`, parsed as a record list.
    pub fn output_records(&mut self, handle: i32) -> Result<Vec<RawRecord>, AbiError> {
        let out = self.output(handle)?;
        record_list(&out)
    }

    /// `mp_load_record`; returns 0 skipped, 1 bound, 2 deleted.
    pub fn load_record(
        &mut self,
        handle: i32,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<i32, AbiError> {
        let (kp, kl) = self.put(key)?;
        let (vp, vl) = match value {
            Some(v) => self.put(v)?,
            None => (0, -1),
        };
        let result = self
            .load_record
            .call(&mut self.store, (handle, kp, kl, vp, vl))
            .map_err(trap)
            .and_then(|s| self.check(s));
        self.release(kp);
        self.release(vp);
        result
    }

    /// `mp_snapshot`, then the bytes.
    pub fn snapshot(&mut self, handle: i32) -> Result<Vec<u8>, AbiError> {
        let s = self.snapshot.call(&mut self.store, handle).map_err(trap)?;
        self.check(s)?;
        Ok(self.last_output()?.0)
    }

    /// `mp_restore`; returns the new handle.
    pub fn restore(&mut self, bytes: &[u8]) -> Result<i32, AbiError> {
        let (p, l) = self.put(bytes)?;
        let result = self
            .restore
            .call(&mut self.store, (p, l))
            .map_err(trap)
            .and_then(|s| self.check(s));
        self.release(p);
        result
    }

    /// `mp_expire`; returns the tombstones.
    pub fn expire(&mut self, handle: i32, now_ms: i64) -> Result<Vec<RawRecord>, AbiError> {
        let f = self.expire.clone();
        self.expiry(&f, handle, now_ms)
    }

    /// `mp_expire_pid`; returns the tombstones.
    pub fn expire_pid(&mut self, handle: i32, mapped: i64) -> Result<Vec<RawRecord>, AbiError> {
        let f = self.expire_pid.clone();
        self.expiry(&f, handle, mapped)
    }

    fn expiry(
        &mut self,
        f: &TypedFunc<(i32, i64), i32>,
        handle: i32,
        arg: i64,
    ) -> Result<Vec<RawRecord>, AbiError> {
        let s = f.call(&mut self.store, (handle, arg)).map_err(trap)?;
        self.check(s)?;
        record_list(&self.last_output()?.0)
    }

    /// `mp_mapper_len`.
    pub fn mapper_len(&mut self, handle: i32) -> Result<usize, AbiError> {
        let f = self.mapper_len.clone();
        self.count(&f, handle)
    }

    /// `mp_confirm`: the records returned since the last confirm are
    /// durable; returns how many bindings it confirmed.
    pub fn confirm(&mut self, handle: i32) -> Result<usize, AbiError> {
        let f = self.confirm.clone();
        self.count(&f, handle)
    }

    /// `mp_abort`: takes back the pending bindings; returns how many.
    pub fn abort(&mut self, handle: i32) -> Result<usize, AbiError> {
        let f = self.abort.clone();
        self.count(&f, handle)
    }

    /// `mp_pending`: how many bindings await `mp_confirm`.
    pub fn pending(&mut self, handle: i32) -> Result<usize, AbiError> {
        let f = self.pending.clone();
        self.count(&f, handle)
    }

    /// Calls a `(handle) -> count` export.
    fn count(&mut self, f: &F1, handle: i32) -> Result<usize, AbiError> {
        let s = f.call(&mut self.store, handle).map_err(trap)?;
        self.check(s).map(|n| n as usize)
    }
}

/// `out` parsed as a record list.
fn record_list(out: &[u8]) -> Result<Vec<RawRecord>, AbiError> {
    parse_records(out).ok_or_else(|| AbiError {
        code: -1,
        message: "malformed record list in output".into(),
    })
}
