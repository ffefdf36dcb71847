use super::{Admitted, Slots, YOUNG};
use std::time::Duration;

#[tokio::test(start_paused = true)]
async fn a_new_connection_displaces_the_oldest_unauthenticated_one_when_their_share_is_full() {
    let slots = Slots::new(4, 2);
    let (mut first, a) = slots.admit().await;
    let (_second, b) = slots.admit().await;
    assert_eq!((a, b), (Admitted::Free, Admitted::Free));
    tokio::time::advance(YOUNG).await;
    let (_third, c) = slots.admit().await;
    assert_eq!(c, Admitted::Displaced);
    tokio::time::timeout(Duration::from_secs(1), first.displaced())
        .await
        .expect("the oldest unauthenticated connection is told to close");
    assert_eq!(slots.counts(), (0, 2));
}

#[tokio::test]
async fn authenticated_connections_are_never_displaced_and_keep_the_rest_of_the_cap() {
    let slots = Slots::new(3, 1);
    let (mut trusted, _) = slots.admit().await;
    trusted.trust().authenticated();
    let (mut other, _) = slots.admit().await;
    other.trust().authenticated();
    assert_eq!(slots.counts(), (2, 0));
    // Unauthenticated newcomers churn through the one remaining slot.
    for _ in 0..5 {
        let (_s, _) = slots.admit().await;
    }
    assert!(
        tokio::time::timeout(Duration::from_millis(50), trusted.displaced())
            .await
            .is_err()
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(50), other.displaced())
            .await
            .is_err()
    );
}

#[tokio::test]
async fn when_every_slot_is_authenticated_a_new_connection_waits_until_one_closes() {
    let slots = Slots::new(2, 1);
    let (a, _) = slots.admit().await;
    a.trust().authenticated();
    let (b, _) = slots.admit().await;
    b.trust().authenticated();
    let waiting = tokio::spawn({
        let slots = slots.clone();
        async move { slots.admit().await.1 }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiting.is_finished(), "admitted past a full cap");
    drop(a);
    let admitted = tokio::time::timeout(Duration::from_secs(1), waiting)
        .await
        .expect("admitted once a slot freed")
        .unwrap();
    assert_eq!(admitted, Admitted::Free);
    assert_eq!(
        slots.counts(),
        (1, 0),
        "the waiter's slot is released with it"
    );
}

#[tokio::test(start_paused = true)]
async fn a_burst_of_young_connections_passes_the_share_without_closing_one_another_up_to_the_cap() {
    // A share of 2 in a cap of 4: four new connections at once are all admitted (none is old
    // enough to close), the fifth meets the cap and closes the oldest, young or not.
    let slots = Slots::new(4, 2);
    let mut burst = Vec::new();
    for _ in 0..4 {
        let (slot, admitted) = slots.admit().await;
        assert_eq!(admitted, Admitted::Free);
        burst.push(slot);
        tokio::time::advance(Duration::from_millis(10)).await;
    }
    assert_eq!(slots.counts(), (0, 4));
    let (_fifth, admitted) = slots.admit().await;
    assert_eq!(admitted, Admitted::Displaced);
    tokio::time::timeout(Duration::from_millis(10), burst[0].displaced())
        .await
        .expect("at the cap the oldest is closed");
    // Once they have aged, the share holds again: a new connection closes the oldest even
    // below the cap.
    let (_, second_alive) = (burst.remove(0), burst.remove(0));
    drop(second_alive);
    tokio::time::advance(YOUNG).await;
    assert_eq!(slots.counts(), (0, 3));
    let (_sixth, admitted) = slots.admit().await;
    assert_eq!(admitted, Admitted::Displaced);
}
