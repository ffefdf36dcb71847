//! The strategies a constraint is made of, one file each: run-as-user, SELinux, the group
//! strategies, capabilities, seccomp, sysctls and volume types. Each gives the values a pod
//! leaves unset and checks the values it has, with OpenShift's error texts.

pub mod capabilities;
pub mod group;
pub mod seccomp;
pub mod selinux;
pub mod sysctls;
pub mod user;
pub mod volumes;
