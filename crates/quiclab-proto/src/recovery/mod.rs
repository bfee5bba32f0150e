//! Loss detection and RTT estimation (RFC 9002 §5-6), independent of what packets carry.

pub mod delivery;
pub mod pacer;
pub mod rtt;
pub mod sent;
pub mod space;
pub mod spurious;

pub use delivery::{DeliveryRateEstimator, DeliverySnapshot, LostPacket, RateSample};
pub use pacer::{Pacer, PacingRate};
pub use rtt::{RttEstimator, GRANULARITY};
pub use sent::{SentPacket, SentPackets};
pub use space::SpaceId;
pub use spurious::SpuriousLossDetector;
