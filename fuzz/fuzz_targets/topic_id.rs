//! TopicId parsing: what parses is exactly the two documented forms, and
//! both forms of the result parse back to it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mirrorpid::TopicId;

fuzz_target!(|text: &str| {
    let Ok(id) = text.parse::<TopicId>() else {
        return;
    };
    let b64 = text.len() == 22
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    let hex = text.len() == 36
        && text.bytes().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => b == b'-',
            _ => b.is_ascii_hexdigit(),
        });
    assert!(b64 || hex, "{text:?} parsed but is neither form");
    assert_eq!(id.to_string().parse::<TopicId>().unwrap(), id);
    assert_eq!(id.to_hex().parse::<TopicId>().unwrap(), id);
    if b64 {
        assert_eq!(id.to_string(), text);
    } else {
        assert_eq!(id.to_hex(), text.to_ascii_lowercase());
    }
});
