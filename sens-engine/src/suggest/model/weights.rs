//! The transformer's weights as the models ship them (safetensors): the family
//! told by its tensors' names, the embeddings, and each layer's dense products
//! (transposed at load, and in 8 bits where the kernel's tiles fit) and norms.

use std::path::Path;

use anyhow::{Context, Result, bail, ensure};
use safetensors::{Dtype, SafeTensors};

use crate::suggest::quant::Quantized;

/// Attention heads per layer.
pub(super) const HEADS: usize = 12;

/// The encoders the loader knows, told apart by their tensors' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Family {
    /// BERT (all-MiniLM-L6-v2): positions from 0, a token-type row, `[CLS]` and
    /// `[SEP]`.
    Bert,
    /// MPNet (all-mpnet-base-v2): positions from 2 (after the padding id), no
    /// token types, `<s>` and `</s>`, and one table of relative-position biases
    /// that every layer adds to its attention scores.
    MpNet,
}

/// The tensor only MPNet has.
const RELATIVE_TENSOR: &str = "encoder.relative_attention_bias.weight";
/// MPNet's relative positions: 32 buckets, half for each direction, exact
/// below 8 and logarithmic up to 128 (the T5 scheme).
pub(super) const RELATIVE_BUCKETS: usize = 32;
pub(super) const RELATIVE_MAX_DISTANCE: f32 = 128.0;

impl Family {
    /// The family of weights whose tensor names `has` tells.
    pub(super) fn of(has: impl Fn(&str) -> bool) -> Self {
        if has(RELATIVE_TENSOR) {
            Family::MpNet
        } else {
            Family::Bert
        }
    }

    /// The tensor names of a layer's attention: query, key, value, output and
    /// its norm.
    fn attention_names(self) -> [&'static str; 5] {
        match self {
            Family::Bert => [
                "attention.self.query",
                "attention.self.key",
                "attention.self.value",
                "attention.output.dense",
                "attention.output.LayerNorm",
            ],
            Family::MpNet => [
                "attention.attn.q",
                "attention.attn.k",
                "attention.attn.v",
                "attention.attn.o",
                "attention.LayerNorm",
            ],
        }
    }

    /// The sequence's first and last tokens.
    pub(super) fn bounds(self) -> [&'static str; 2] {
        match self {
            Family::Bert => ["[CLS]", "[SEP]"],
            Family::MpNet => ["<s>", "</s>"],
        }
    }

    /// The configs' `layer_norm_eps`.
    pub(super) fn layer_norm_eps(self) -> f32 {
        match self {
            Family::Bert => 1e-12,
            Family::MpNet => 1e-5,
        }
    }

    /// The best cosine from which the model shows a list the words would not: chosen on
    /// the suggestion cases for the one model of each family that `scripts/setup.sh`
    /// installs (docs/suggestions.md, "Ranking with the contextual model"; measured in
    /// docs/experiments/suggestions.md, "Fifth round: the contextual model, measured"). A
    /// `none` prompt's best cosine reaches 0.14-0.32 with MiniLM.
    pub(super) fn vouch(self) -> f64 {
        match self {
            Family::Bert => 0.45,
            Family::MpNet => 0.42,
        }
    }

    /// The position row of the first token.
    pub(super) fn first_position(self) -> usize {
        match self {
            Family::Bert => 0,
            Family::MpNet => 2,
        }
    }
}

pub(super) struct Dense {
    /// `inputs x outputs`, row-major: the stored matrix transposed at load, so
    /// that the product's packing of it reads whole rows (packing the stored
    /// layout, a column at a time, took more than half of an embedding's time).
    pub(super) weight: Vec<f32>,
    pub(super) bias: Vec<f32>,
    /// The weights in 8 bits, for the prompt (`None`: a shape the kernel's
    /// tiles do not fit).
    pub(super) quantized: Option<Quantized>,
}

pub(super) struct Norm {
    pub(super) weight: Vec<f32>,
    pub(super) bias: Vec<f32>,
}

pub(super) struct Layer {
    /// The query, key and value projections as one product: each row of its
    /// output holds the three side by side (one rounding of the rows in 8
    /// bits, one split over the cores).
    pub(super) qkv: Dense,
    pub(super) attention_out: Dense,
    pub(super) attention_norm: Norm,
    pub(super) intermediate: Dense,
    pub(super) output: Dense,
    pub(super) output_norm: Norm,
}

pub(super) struct Weights {
    pub(super) family: Family,
    pub(super) hidden: usize,
    pub(super) words: Vec<f32>,
    pub(super) positions: Vec<f32>,
    /// Added to every token (BERT's token type 0; zeros for MPNet).
    pub(super) token_type: Vec<f32>,
    pub(super) norm: Norm,
    pub(super) layers: Vec<Layer>,
    /// MPNet's `buckets x heads` relative-position biases; empty for BERT.
    pub(super) relative: Vec<f32>,
}

/// A safetensors file's length and JSON header, read without its data.
pub(super) fn read_header(path: &Path) -> Result<(u64, Vec<u8>)> {
    use std::io::Read;
    let read = || -> std::io::Result<(u64, Vec<u8>)> {
        let mut file = std::fs::File::open(path)?;
        let length = file.metadata()?.len();
        let mut head = vec![0u8; 8];
        file.read_exact(&mut head)?;
        let n = u64::from_le_bytes(head[..8].try_into().expect("8 bytes")).min(length);
        head.resize(8 + n as usize, 0);
        file.read_exact(&mut head[8..])?;
        Ok((length, head))
    };
    let (length, head) =
        read().with_context(|| format!("reading the header of {}", path.display()))?;
    // The header alone, checked by the format's reader (the data is not read).
    let (n, _) = SafeTensors::read_metadata(&head)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok((length, head[8..8 + n].to_vec()))
}

impl Weights {
    /// A safetensors file (its reader checks the header, the offsets and the
    /// length): every tensor this forward pass needs, in `F32`, of its shape.
    pub(super) fn parse(bytes: &[u8]) -> Result<Self> {
        let tensors =
            SafeTensors::deserialize(bytes).map_err(|e| anyhow::anyhow!("not safetensors: {e}"))?;
        let view = |name: &str| {
            tensors
                .tensor(name)
                .map_err(|_| anyhow::anyhow!("no tensor {name}"))
        };
        let tensor = |name: &str, shape: &[usize]| -> Result<Vec<f32>> {
            let v = view(name)?;
            ensure!(
                v.dtype() == Dtype::F32,
                "tensor {name}: dtype {:?}, not F32",
                v.dtype()
            );
            ensure!(
                v.shape() == shape,
                "tensor {name}: shape {:?}, not {shape:?}",
                v.shape()
            );
            Ok(v.data()
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect())
        };
        let shape_of = |name: &str| view(name).map(|v| v.shape().to_vec());
        let family = Family::of(|name| view(name).is_ok());
        let words_shape = shape_of("embeddings.word_embeddings.weight")?;
        let [vocab, hidden] = words_shape[..] else {
            bail!("word embeddings of shape {words_shape:?}");
        };
        ensure!(
            hidden % HEADS == 0,
            "{hidden} dimensions over {HEADS} heads"
        );
        let inner = shape_of("encoder.layer.0.intermediate.dense.weight")?
            .first()
            .copied()
            .context("intermediate layer without a shape")?;
        let positions = shape_of("embeddings.position_embeddings.weight")?
            .first()
            .copied()
            .context("position embeddings without a shape")?;
        // A product by the stored `outputs x inputs` matrices of `names`, one
        // above the other.
        let dense = |names: &[&str], outputs: usize, inputs: usize| -> Result<Dense> {
            let (mut stored, mut bias) = (Vec::new(), Vec::new());
            for name in names {
                stored.extend(tensor(&format!("{name}.weight"), &[outputs, inputs])?);
                bias.extend(tensor(&format!("{name}.bias"), &[outputs])?);
            }
            Ok(Dense {
                weight: transpose(&stored, bias.len(), inputs),
                quantized: Quantized::new(&stored, inputs),
                bias,
            })
        };
        let norm = |name: &str| -> Result<Norm> {
            Ok(Norm {
                weight: tensor(&format!("{name}.weight"), &[hidden])?,
                bias: tensor(&format!("{name}.bias"), &[hidden])?,
            })
        };
        let mut layers = Vec::new();
        while view(&format!(
            "encoder.layer.{}.output.dense.weight",
            layers.len()
        ))
        .is_ok()
        {
            let p = format!("encoder.layer.{}", layers.len());
            let [query, key, value, out, out_norm] = family.attention_names();
            let qkv = [query, key, value].map(|name| format!("{p}.{name}"));
            layers.push(Layer {
                qkv: dense(&qkv.each_ref().map(String::as_str), hidden, hidden)?,
                attention_out: dense(&[&format!("{p}.{out}")], hidden, hidden)?,
                attention_norm: norm(&format!("{p}.{out_norm}"))?,
                intermediate: dense(&[&format!("{p}.intermediate.dense")], inner, hidden)?,
                output: dense(&[&format!("{p}.output.dense")], hidden, inner)?,
                output_norm: norm(&format!("{p}.output.LayerNorm"))?,
            });
        }
        ensure!(!layers.is_empty(), "no encoder layers");
        let (token_type, relative) = match family {
            Family::Bert => {
                let name = "embeddings.token_type_embeddings.weight";
                let mut row = tensor(name, &shape_of(name)?)?;
                row.truncate(hidden);
                (row, Vec::new())
            }
            Family::MpNet => (
                vec![0.0; hidden],
                tensor(RELATIVE_TENSOR, &[RELATIVE_BUCKETS, HEADS])?,
            ),
        };
        Ok(Weights {
            family,
            hidden,
            words: tensor("embeddings.word_embeddings.weight", &[vocab, hidden])?,
            positions: tensor(
                "embeddings.position_embeddings.weight",
                &[positions, hidden],
            )?,
            token_type,
            norm: norm("embeddings.LayerNorm")?,
            layers,
            relative,
        })
    }
}

/// The `cols x rows` transpose of a row-major `rows x cols` matrix.
fn transpose(m: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0.0f32; m.len()];
    for (i, row) in m.chunks_exact(cols).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            t[j * rows + i] = v;
        }
    }
    t
}
