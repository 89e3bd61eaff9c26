"""Entity types of protected health information and their HIPAA Safe Harbor categories.

The type inventory follows RedactOR's 33 production types, extended with the generic types a de-identifier
needs (``DATE``, ``ZIP_CODE``, ``FAX_NUMBER``, ...). ``HIPAA_MAP`` names, for every type, the Safe Harbor
identifier category it belongs to (45 CFR 164.514(b)(2)), or ``None`` for quasi-identifiers that Safe Harbor
does not list (occupation, race, marital status, ...). Some categories depend on the value, not only the type:
ages count only above 89 and dates only when they carry more than the year; see
:func:`anonpsy.phi.analyzer.safe_harbor_category`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final


class EntityType(StrEnum):
    """Kinds of identifiers the analyzer reports (RedactOR's production types plus generic ones)."""

    # RedactOR production types
    ADDRESS = "ADDRESS"
    SSN_OR_TAXPAYER = "SSN_OR_TAXPAYER"
    EMAIL = "EMAIL"
    PASSPORT_NUMBER_US = "PASSPORT_NUMBER_US"
    TELEPHONE_NUMBER = "TELEPHONE_NUMBER"
    DRIVER_ID_US = "DRIVER_ID_US"
    BANK_ACCOUNT_NUMBER = "BANK_ACCOUNT_NUMBER"
    BANK_SWIFT = "BANK_SWIFT"
    BANK_ROUTING = "BANK_ROUTING"
    CREDIT_DEBIT_NUMBER = "CREDIT_DEBIT_NUMBER"
    MEDICAL_RECORD_NUMBER = "MEDICAL_RECORD_NUMBER"
    HEALTH_PLAN_ID = "HEALTH_PLAN_ID"
    CERTIFICATE_NUMBER = "CERTIFICATE_NUMBER"
    FIN = "FIN"
    VEHICLE_LICENSE_PLATE_US = "VEHICLE_LICENSE_PLATE_US"
    VEHICLE_IDENTIFIER_US = "VEHICLE_IDENTIFIER_US"
    GUID = "GUID"
    PERSON = "PERSON"
    DIAGNOSTIC_LABS = "DIAGNOSTIC_LABS"
    PHARMACY = "PHARMACY"
    ORGANIZATION = "ORGANIZATION"
    AGE = "AGE"
    LOCATION = "LOCATION"
    PARENTHOOD = "PARENTHOOD"
    MARITAL_STATUS = "MARITAL_STATUS"
    OCCUPATION = "OCCUPATION"
    RACE = "RACE"
    ETHNICITY = "ETHNICITY"
    BIRTH_DATE_TIME = "BIRTH_DATE_TIME"
    DEATH_DATE_TIME = "DEATH_DATE_TIME"
    IP_ADDRESS = "IP_ADDRESS"
    URL = "URL"
    MAC_ADDRESS = "MAC_ADDRESS"
    # Generic additions
    DATE = "DATE"
    ZIP_CODE = "ZIP_CODE"
    FAX_NUMBER = "FAX_NUMBER"
    ACCOUNT_NUMBER = "ACCOUNT_NUMBER"
    DEVICE_IDENTIFIER = "DEVICE_IDENTIFIER"
    LICENSE_NUMBER = "LICENSE_NUMBER"
    IBAN = "IBAN"
    OTHER_ID = "OTHER_ID"


class SafeHarbor(StrEnum):
    """The 18 identifier categories of the HIPAA Safe Harbor method, 45 CFR 164.514(b)(2)(i)(A)-(R)."""

    names = "names"
    geographic_subdivisions = "geographic_subdivisions"
    dates_and_ages_over_89 = "dates_and_ages_over_89"
    telephone_numbers = "telephone_numbers"
    fax_numbers = "fax_numbers"
    email_addresses = "email_addresses"
    social_security_numbers = "social_security_numbers"
    medical_record_numbers = "medical_record_numbers"
    health_plan_beneficiary_numbers = "health_plan_beneficiary_numbers"
    account_numbers = "account_numbers"
    certificate_license_numbers = "certificate_license_numbers"
    vehicle_identifiers = "vehicle_identifiers"
    device_identifiers = "device_identifiers"
    urls = "urls"
    ip_addresses = "ip_addresses"
    biometric_identifiers = "biometric_identifiers"
    full_face_photographs = "full_face_photographs"
    other_unique_identifiers = "other_unique_identifiers"


HIPAA_IDENTIFIERS: Final[tuple[str, ...]] = tuple(c.value for c in SafeHarbor)

E = EntityType
S = SafeHarbor

HIPAA_MAP: Final[dict[EntityType, str | None]] = {
    E.ADDRESS: S.geographic_subdivisions,
    E.SSN_OR_TAXPAYER: S.social_security_numbers,
    E.EMAIL: S.email_addresses,
    E.PASSPORT_NUMBER_US: S.certificate_license_numbers,
    E.TELEPHONE_NUMBER: S.telephone_numbers,
    E.DRIVER_ID_US: S.certificate_license_numbers,
    E.BANK_ACCOUNT_NUMBER: S.account_numbers,
    E.BANK_SWIFT: S.account_numbers,
    E.BANK_ROUTING: S.account_numbers,
    E.CREDIT_DEBIT_NUMBER: S.account_numbers,
    E.MEDICAL_RECORD_NUMBER: S.medical_record_numbers,
    E.HEALTH_PLAN_ID: S.health_plan_beneficiary_numbers,
    E.CERTIFICATE_NUMBER: S.certificate_license_numbers,
    E.FIN: S.account_numbers,
    E.VEHICLE_LICENSE_PLATE_US: S.vehicle_identifiers,
    E.VEHICLE_IDENTIFIER_US: S.vehicle_identifiers,
    E.GUID: S.other_unique_identifiers,
    E.PERSON: S.names,
    E.DIAGNOSTIC_LABS: None,
    E.PHARMACY: None,
    E.ORGANIZATION: None,
    E.AGE: S.dates_and_ages_over_89,
    E.LOCATION: S.geographic_subdivisions,
    E.PARENTHOOD: None,
    E.MARITAL_STATUS: None,
    E.OCCUPATION: None,
    E.RACE: None,
    E.ETHNICITY: None,
    E.BIRTH_DATE_TIME: S.dates_and_ages_over_89,
    E.DEATH_DATE_TIME: S.dates_and_ages_over_89,
    E.IP_ADDRESS: S.ip_addresses,
    E.URL: S.urls,
    E.MAC_ADDRESS: S.device_identifiers,
    E.DATE: S.dates_and_ages_over_89,
    E.ZIP_CODE: S.geographic_subdivisions,
    E.FAX_NUMBER: S.fax_numbers,
    E.ACCOUNT_NUMBER: S.account_numbers,
    E.DEVICE_IDENTIFIER: S.device_identifiers,
    E.LICENSE_NUMBER: S.certificate_license_numbers,
    E.IBAN: S.account_numbers,
    E.OTHER_ID: S.other_unique_identifiers,
}

# Overlap resolution: between equally long candidates the higher number wins. Specific, labelled or
# checksummed identifiers outrank generic ones; a date retyped by its context outranks a plain date; an
# address outranks the city, zip or person name inside it.
TYPE_PRIORITY: Final[dict[str, int]] = {
    E.EMAIL: 100,
    E.URL: 60,
    E.MEDICAL_RECORD_NUMBER: 95,
    E.HEALTH_PLAN_ID: 94,
    E.ACCOUNT_NUMBER: 93,
    E.FIN: 93,
    E.BANK_ACCOUNT_NUMBER: 93,
    E.DRIVER_ID_US: 92,
    E.PASSPORT_NUMBER_US: 92,
    E.LICENSE_NUMBER: 91,
    E.CERTIFICATE_NUMBER: 91,
    E.DEVICE_IDENTIFIER: 90,
    E.VEHICLE_IDENTIFIER_US: 90,
    E.VEHICLE_LICENSE_PLATE_US: 90,
    E.BANK_ROUTING: 89,
    E.BANK_SWIFT: 89,
    E.IBAN: 89,
    E.SSN_OR_TAXPAYER: 88,
    E.CREDIT_DEBIT_NUMBER: 87,
    E.OTHER_ID: 86,
    E.GUID: 85,
    E.MAC_ADDRESS: 84,
    E.IP_ADDRESS: 83,
    E.FAX_NUMBER: 81,
    E.TELEPHONE_NUMBER: 80,
    E.BIRTH_DATE_TIME: 79,
    E.DEATH_DATE_TIME: 79,
    E.DATE: 75,
    E.AGE: 74,
    E.ADDRESS: 70,
    E.ZIP_CODE: 69,
    E.PHARMACY: 66,
    E.DIAGNOSTIC_LABS: 66,
    E.ORGANIZATION: 65,
    E.PERSON: 64,
    E.LOCATION: 63,
    E.OCCUPATION: 40,
    E.MARITAL_STATUS: 40,
    E.PARENTHOOD: 40,
    E.RACE: 40,
    E.ETHNICITY: 40,
}

PATTERN_TYPES: Final[frozenset[str]] = frozenset(
    {
        E.TELEPHONE_NUMBER,
        E.FAX_NUMBER,
        E.EMAIL,
        E.SSN_OR_TAXPAYER,
        E.MEDICAL_RECORD_NUMBER,
        E.HEALTH_PLAN_ID,
        E.ACCOUNT_NUMBER,
        E.FIN,
        E.BANK_ACCOUNT_NUMBER,
        E.BANK_ROUTING,
        E.BANK_SWIFT,
        E.IBAN,
        E.CREDIT_DEBIT_NUMBER,
        E.DRIVER_ID_US,
        E.PASSPORT_NUMBER_US,
        E.LICENSE_NUMBER,
        E.CERTIFICATE_NUMBER,
        E.DEVICE_IDENTIFIER,
        E.VEHICLE_IDENTIFIER_US,
        E.VEHICLE_LICENSE_PLATE_US,
        E.GUID,
        E.OTHER_ID,
        E.DATE,
        E.BIRTH_DATE_TIME,
        E.DEATH_DATE_TIME,
        E.URL,
        E.IP_ADDRESS,
        E.MAC_ADDRESS,
        E.ZIP_CODE,
    }
)

DATE_TYPES: Final[frozenset[str]] = frozenset({E.DATE, E.BIRTH_DATE_TIME, E.DEATH_DATE_TIME})

# Quasi-identifiers: kept by Safe Harbor but identifying in combination (RedactOR's demographic types).
QUASI_IDENTIFIER_TYPES: Final[frozenset[str]] = frozenset(t.value for t, c in HIPAA_MAP.items() if c is None)

# Ages above this value are Safe Harbor identifiers (45 CFR 164.514(b)(2)(i)(C)).
AGE_SAFE_HARBOR_LIMIT: Final[int] = 89

del E, S

__all__ = [
    "AGE_SAFE_HARBOR_LIMIT",
    "DATE_TYPES",
    "HIPAA_IDENTIFIERS",
    "HIPAA_MAP",
    "PATTERN_TYPES",
    "QUASI_IDENTIFIER_TYPES",
    "TYPE_PRIORITY",
    "EntityType",
    "SafeHarbor",
]
