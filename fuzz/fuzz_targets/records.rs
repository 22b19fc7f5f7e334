//! `__mirror_state` key and value decoding and `load_record`. Decoding is
//! stable (decode(encode(decode(x))) == decode(x)); a failed load changes
//! nothing; a successful one leaves a state that restores from its snapshot.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirrorpid::{Mapper, StateRecord};
use mirrorpid_fuzz::{seeded_mapper, state};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let split = usize::from(u16::from_be_bytes([data[0], data[1]])) % (data.len() - 1);
    let (key, value) = data[2..].split_at(split.min(data.len() - 2));
    let value = (!value.is_empty() && value[0] != 0xff).then_some(value);
    let Ok(record) = StateRecord::decode(key, value) else {
        let mut m = seeded_mapper();
        let before = state(&m);
        // Bytes that do not decode never reach the mapper; nothing changes.
        assert_eq!(state(&m), before);
        let _ = &mut m;
        return;
    };
    let (k, v) = record.encode().expect("a decoded record encodes");
    let again = StateRecord::decode(&k, v.as_deref()).expect("re-encoded bytes decode");
    assert_eq!(again, record);
    let json = record.to_json().to_string();
    assert_eq!(StateRecord::from_json(&json).unwrap(), record);
    let mut m = seeded_mapper();
    let before = state(&m);
    match m.load_record(&record) {
        Err(_) => assert_eq!(state(&m), before, "a failed load changed the mapper"),
        Ok(_) => {
            let restored = Mapper::restore(&m.snapshot()).expect("a loaded state is consistent");
            assert_eq!(state(&restored).0, state(&m).0);
        }
    }
});
