//! The local similarity's test set: paraphrases that keep the facts pass, answers that
//! change a status, number, id, date, weekday or the negation fail, with the fact named.

use goldgate::score::semantic;
use goldgate::score::semantic::DEFAULT_THRESHOLD;

use crate::scoring::support::ORDER;

#[test]
fn local_similarity_passes_paraphrases() {
    let pairs = [
        (
            ORDER,
            "Good news: ORD-12345 was shipped and will arrive April 18.",
        ),
        (
            ORDER,
            "ORD-12345 is on its way: it shipped and should be with you no later than 2026-04-18.",
        ),
        (
            "Of course! Could you share your order ID?",
            "Sure, can you give me your order number?",
        ),
        (
            "I wasn't able to find that order.",
            "Sorry, I couldn't find an order with that ID.",
        ),
        (
            "Your refund of $49.99 has been approved and will be processed within 5 business days.",
            "Good news, we approved your $49.99 refund. Expect it within five business days.",
        ),
        (
            "Invoice INV-5678 was paid on March 3, 2026.",
            "We received payment for INV-5678 on 2026-03-03, so it is paid.",
        ),
        (
            "Welcome to Acme Support! How can I help you today?",
            "Hi there, thanks for contacting Acme Support. What can I help you with today?",
        ),
        (
            "Your order was delivered on Monday.",
            "We delivered the order Monday afternoon.",
        ),
        (
            "I'm transferring you to a billing specialist.",
            "Let me transfer you to a specialist in billing.",
        ),
        (
            "Your appointment is confirmed for Tuesday at 10:30.",
            "You're all set: the appointment on Tuesday at 10:30 is confirmed.",
        ),
        (
            "The order ORD-99999 was not found.",
            "I couldn't find any order matching ORD-99999.",
        ),
        (
            "Your order ORD-12345 has shipped.",
            "Order 12345 has been dispatched.",
        ),
        (
            "Your subscription is active until December 31, 2026.",
            "The subscription stays active through Dec 31st, 2026. Don't hesitate to ask anything else!",
        ),
        (
            "shipped",
            "Your order ORD-12345 has shipped and should arrive April 18.",
        ),
    ];
    for (expected, actual) in pairs {
        let verdict = semantic::compare(expected, actual, DEFAULT_THRESHOLD);
        assert!(
            verdict.passed,
            "should pass:\n  {expected}\n  {actual}\n  {verdict:?}"
        );
        assert!(verdict.score >= DEFAULT_THRESHOLD && verdict.score <= 1.0);
    }
}

/// An expected reply, an answer that contradicts it, and the word the reason must name.
const CONTRADICTIONS: &[(&str, &str, &str)] = &[
    (
        ORDER,
        "Your order ORD-12345 has not shipped yet.",
        "negative",
    ),
    (
        ORDER,
        "Your order ORD-12346 has shipped and should arrive by April 18th.",
        "ORD-12346",
    ),
    (ORDER, "Your order ORD-12345 was cancelled.", "cancelled"),
    (
        ORDER,
        "Your order ORD-12345 has shipped and should arrive by April 19th.",
        "april 19",
    ),
    (
        "Your refund of $49.99 has been approved.",
        "Your refund of $49.99 has been denied.",
        "denied",
    ),
    (
        "Your refund of $49.99 has been approved.",
        "Your refund of $59.99 has been approved.",
        "59.99",
    ),
    (
        "I wasn't able to find that order.",
        "I found your order.",
        "affirmative",
    ),
    (
        "Your appointment is confirmed for Tuesday at 10:30.",
        "Your appointment is confirmed for Thursday at 10:30.",
        "thursday",
    ),
    (
        "Your appointment is confirmed for Tuesday at 10:30.",
        "Your appointment is confirmed for Tuesday at 11:30.",
        "11:30",
    ),
    (
        "Invoice INV-5678 was paid.",
        "Invoice INV-5678 is unpaid.",
        "unpaid",
    ),
    (
        "It will be processed within 5 business days.",
        "It will be processed within 10 business days.",
        "10",
    ),
    (
        "Your subscription is active until December 31, 2026.",
        "Your subscription expired on December 31, 2026.",
        "expired",
    ),
    (
        "Your subscription is active until December 31, 2026.",
        "Your subscription is active until December 31, 2025.",
        "2025",
    ),
    (
        "Your order has been delivered.",
        "Your order is still pending delivery.",
        "pending",
    ),
    (
        "Please share your order ID.",
        "The weather is lovely today.",
        "missing",
    ),
];

#[test]
fn local_similarity_fails_contradictions() {
    for &(expected, actual, named) in CONTRADICTIONS {
        let verdict = semantic::compare(expected, actual, DEFAULT_THRESHOLD);
        assert!(
            !verdict.passed,
            "should fail:\n  {expected}\n  {actual}\n  {verdict:?}"
        );
        let reason = verdict.reason.unwrap_or_default().to_lowercase();
        assert!(
            reason.contains(&named.to_lowercase()),
            "reason should name {named:?}: {reason}"
        );
    }
}

#[test]
fn recall_counts_content_words_only() {
    let full = semantic::recall(
        "The API rate limit is 500 requests per minute.",
        "500 requests per minute",
    );
    assert!(full.score > 0.4 && full.score < 1.0, "{full:?}");
    assert!(full.missing.contains(&"api".to_owned()), "{full:?}");
    let none = semantic::recall("The API rate limit is 500 requests per minute.", "");
    assert_eq!(none.score, 0.0);
}

#[test]
fn courtesy_alone_needs_only_an_answer() {
    assert!(semantic::compare("Hello!", "Hi there, welcome!", DEFAULT_THRESHOLD).passed);
    assert!(!semantic::compare("Hello!", "", DEFAULT_THRESHOLD).passed);
}
